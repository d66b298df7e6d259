// SPDX-License-Identifier: GPL-2.0-or-later
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "lockscope/agent/stack_table.h"
#include "lockscope/capture/capture.h"

// The captures of consecutive intervals added into one: the cumulative
// figures since the agent started, or the delta of a profile request.
// Bounded: beyond max_stacks distinct stacks, new ones are filed under one
// "[stack table full]" stack; beyond max_locks distinct locks, new ones
// under the key "[other locks]"; both counted.
namespace lockscope::agent {

inline constexpr const char* kStackTableFullFrame = "[stack table full]";
inline constexpr const char* kOtherLocksKey = "[other locks]";
inline constexpr const char* kInterruptedFrame = "[interrupted code]";
inline constexpr const char* kOwnersNotKeptFrame = "[owners not kept]";

struct SumLimits {
    size_t max_stacks = 50000;
    size_t max_locks = 5000;
    // CPU samples by stack: a fork-heavy machine makes new kernel stacks all
    // the time, so the sum since start keeps only the CPU totals and leaves
    // (the lock sites' stacks are what its profiles need); a delta keeps them.
    bool cpu_stacks = true;
    // Kernel stacks cut after an asynchronous interrupt's entry, the frames
    // it interrupted folded into one kInterruptedFrame: those are any
    // instruction of any function, and kept they make most lock sites of a
    // busy machine new ones (700 of 823 in a minute of the soak's load), so
    // the sum since start never stops growing. A delta keeps them.
    bool fold_interrupted = false;
    // Lock owners (--lock-owner), each a stack and a task: tids come and go,
    // so beyond this many a site's new ones add up in its one
    // "[owners not kept]" holder (no task), counted.
    size_t max_owners = 20000;
};

class CaptureSum {
public:
    explicit CaptureSum(SumLimits limits = {}) : limits_(limits), stacks_(limits.max_stacks) {}

    // Adds an interval's capture: histograms merged, counters summed,
    // meta.duration_s the sum, meta.start_time the first interval's, the
    // waits' sampled share (waitShare) the intervals' weighted by duration.
    void add(const Capture& slice);
    // The sum as a capture: its sites and the stacks they name rebuilt from
    // the compact tables (one Log2Hist a histogram again: a profile's worth).
    Capture capture() const;
    // Everything but the sites and stacks: what the metrics read each scrape.
    const Capture& totals() const { return sum_; }
    uint64_t intervals() const { return intervals_; }
    // Sites whose stack was filed under the full-table stack, and lock
    // records folded into "[other locks]".
    uint64_t stacksNotKept() const { return stacksNotKept_; }
    uint64_t locksFolded() const { return locksFolded_; }
    uint64_t ownersFolded() const { return ownersFolded_; }

private:
    void addWaitShare(const Meta& slice);

    // A lock site as the sum keeps it: stacks by their table number, holders
    // with their stack's table number.
    struct Site {
        uint32_t stack = 0;
        std::optional<uint32_t> user;
        Log2Hist wait, hold, acquire;
        uint64_t wait_untimed = 0;
        std::vector<Holder> holders;
    };
    struct Sites {
        std::vector<Site> list;                      // as first seen
        std::unordered_map<uint64_t, size_t> index;  // (stack, user stack) -> list
    };
    using SliceStacks = std::unordered_map<uint32_t, uint32_t>;  // a slice's stack id -> the table's

    Stack kept(const Stack& s) const;  // as the sum keeps it (fold_interrupted)
    uint32_t stackId(const StackIndex& slice, uint32_t sliceId, SliceStacks& seen);
    size_t lockFor(const Lock& l);
    void addLock(const StackIndex& slice, const Lock& l, SliceStacks& seen);
    void addHolders(const StackIndex& slice, const std::vector<Holder>& from, Site& into, SliceStacks& seen);
    void addCpu(const Capture& slice, const StackIndex& stacks, SliceStacks& seen);
    static void addLatencies(std::vector<LatencyEntry>& into, const std::vector<LatencyEntry>& from);

    SumLimits limits_;
    Capture sum_;                // locks without sites, no stacks
    std::vector<Sites> sites_;   // by sum_.locks' index
    StackTable stacks_;
    uint64_t intervals_ = 0;
    uint64_t stacksNotKept_ = 0;
    uint64_t locksFolded_ = 0;
    uint64_t ownersKept_ = 0;
    uint64_t ownersFolded_ = 0;
    double waitAttachedSeconds_ = 0; // seconds of the sum the wait programs were attached
    std::map<std::string, size_t> lockIndex_;
    std::optional<uint32_t> fullStack_;
};

} // namespace lockscope::agent
