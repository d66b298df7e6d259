// SPDX-License-Identifier: GPL-2.0-or-later
#pragma once

#include <string>

#include "lockscope/capture/capture.h"

namespace lockscope::detail {

// The document text, compact or pretty (pretty_json.h), without the final
// newline; throws nlohmann::json::exception for what JSON cannot hold.
std::string serializeCapture(const Capture& c, bool pretty);

} // namespace lockscope::detail
