// SPDX-License-Identifier: GPL-2.0-or-later
#pragma once

#include <string>
#include <string_view>

#include "lockscope/capture/capture.h"
#include "lockscope/util/text_sink.h"

namespace lockscope::detail {

// The document text, on one line or pretty (pretty_json.h), in version 1 or
// the compact layout, without the final newline; throws
// nlohmann::json::exception for what JSON cannot hold.
std::string serializeCapture(const Capture& c, bool pretty, bool compact = false);

// The same text in pieces, in order, for a writer that never holds it whole.
void serializeCapture(const Capture& c, bool pretty, bool compact, const util::TextSink& sink);

} // namespace lockscope::detail
