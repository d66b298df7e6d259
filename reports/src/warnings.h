// SPDX-License-Identifier: GPL-2.0-or-later
#pragma once

#include <string>
#include <vector>

#include "lockscope/capture/capture.h"

namespace lockscope::reports {

// Lost/dropped events, skipped probes and empty captures, one line each.
// side prefixes every line ("before: ") when not empty.
std::vector<std::string> captureWarnings(const Capture& capture, const std::string& side);

// What the budgets estimated or shared out (timing, syscall and stack
// budgets): normal sampling, a note, not a warning (warnings are for lost data).
std::vector<std::string> captureNotes(const Capture& capture, const std::string& side);

} // namespace lockscope::reports
