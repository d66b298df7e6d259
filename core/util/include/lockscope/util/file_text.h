// SPDX-License-Identifier: GPL-2.0-or-later
#pragma once

#include <filesystem>
#include <string>

namespace lockscope::util {

// A whole file as bytes; "" when it cannot be opened (callers that must tell
// a missing file from an empty one check before, or report the "" they got).
std::string readTextFile(const std::filesystem::path& path);

} // namespace lockscope::util
