// SPDX-License-Identifier: GPL-2.0-or-later
#pragma once

#include <functional>
#include <string_view>

namespace lockscope::util {

// Where text made in pieces goes as it is made (a file, a pipe, a zstd
// stream, a network response): the capture writer's and the renderers'.
using TextSink = std::function<void(std::string_view)>;

} // namespace lockscope::util
