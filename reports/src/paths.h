// SPDX-License-Identifier: GPL-2.0-or-later
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "lockscope/capture/capture.h"
#include "lockscope/capture/site_shares.h"

// Call paths of a lock with stacks folded by (function, module) labels, so
// that the same path from two kernel builds (different offsets and
// addresses) compares equal. Shared by the report and the comparison.
namespace lockscope::reports {

struct FoldedPath {
    std::vector<std::string> frames;  // outermost first, frameLabel() strings
    uint64_t count = 0;
    uint64_t wait_ns = 0;
    uint64_t hold_ns = 0;
};

// Sorted by wait (then hold) descending; the unwalked events shared out
// over the walked paths (site_shares.h).
std::vector<FoldedPath> lockPaths(const Lock& lock, const StackIndex& index);
std::vector<FoldedPath> lockPaths(const LockShares& shares, const StackIndex& index);

// "func+0xoff" of the first non-lock frame on the lock's hottest site.
std::string callerOf(const Lock& lock, const StackIndex& index);
std::string callerOf(const LockShares& shares, const StackIndex& index);

// Frame labels of a stack, outermost first.
std::vector<std::string> pathLabels(const Stack* stack);

// Joins labels with ';' (folded-stack key).
std::string joinPath(const std::vector<std::string>& frames);

} // namespace lockscope::reports
