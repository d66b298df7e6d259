// SPDX-License-Identifier: GPL-2.0-or-later
#pragma once

#include <string>
#include <vector>

#include "lockscope/capture/capture.h"

namespace lockscope::reports {

// Lost/dropped events, skipped probes and empty captures, one line each.
// side prefixes every line ("before: ") when not empty.
std::vector<std::string> captureWarnings(const Capture& capture, const std::string& side);

} // namespace lockscope::reports
