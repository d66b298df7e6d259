// SPDX-License-Identifier: GPL-2.0-or-later
#pragma once

#include <cstddef>
#include <functional>
#include <string>

namespace lockscope::reports::detail {

// Makes pieces 0..count-1 of a text on the calling thread and on helper
// threads (one fewer than the CPUs, at least one, at most three), and hands
// each to `take` on the calling thread, in order. The helpers live for the
// whole text and a few pieces' buffers are reused, so a big document costs
// neither a thread nor fresh memory per piece; a maker more than a few pieces
// ahead of `take` waits, so memory holds those few, not the text.
// `make` appends piece i to an empty string and must only read shared data.
// What `make` or `take` throws is rethrown here once every helper stopped.
using MakePiece = std::function<void(size_t piece, std::string& text)>;
using TakePiece = std::function<void(const std::string& text)>;
void makeInOrder(size_t count, const MakePiece& make, const TakePiece& take);

} // namespace lockscope::reports::detail
