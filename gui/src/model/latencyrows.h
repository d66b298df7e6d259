// SPDX-License-Identifier: GPL-2.0-or-later
#pragma once

#include <cstddef>
#include <vector>

namespace lockscope::gui {

// Latency tables list the syscalls, then the kernel functions: the element
// a model row stands for, or nullptr past the end.
template <class T>
const T* latencyRow(const std::vector<T>& syscalls, const std::vector<T>& functions, int row) noexcept
{
    if (row < 0)
        return nullptr;
    const auto r = static_cast<size_t>(row);
    if (r < syscalls.size())
        return &syscalls[r];
    if (r - syscalls.size() < functions.size())
        return &functions[r - syscalls.size()];
    return nullptr;
}

} // namespace lockscope::gui
