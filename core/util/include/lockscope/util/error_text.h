// SPDX-License-Identifier: GPL-2.0-or-later
#pragma once

#include <string>
#include <string_view>

// Text for one-line error messages: the capture reader's and OutputFile's.
namespace lockscope::util {

// s with every byte outside printable ASCII as \xNN, cut at maxLen: error
// text must stay one printable line whatever a file or path holds.
std::string printable(std::string_view s, size_t maxLen = 80);

// strerror is not thread-safe and the GUI reads captures on worker threads.
std::string errnoText(int e);

} // namespace lockscope::util
