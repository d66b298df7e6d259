// SPDX-License-Identifier: GPL-2.0-or-later
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <tuple>
#include <string>
#include <utility>
#include <vector>

#include "lockscope/capture/capture.h"

// The captures of consecutive intervals added into one: the cumulative
// figures since the agent started, or the delta of a profile request.
// Bounded: beyond max_stacks distinct stacks, new ones are filed under one
// "[stack table full]" stack; beyond max_locks distinct locks, new ones
// under the key "[other locks]"; both counted.
namespace lockscope::agent {

inline constexpr const char* kStackTableFullFrame = "[stack table full]";
inline constexpr const char* kOtherLocksKey = "[other locks]";

struct SumLimits {
    size_t max_stacks = 50000;
    size_t max_locks = 5000;
    // CPU samples by stack: a fork-heavy machine makes new kernel stacks all
    // the time, so the sum since start keeps only the CPU totals and leaves
    // (the lock sites' stacks are what its profiles need); a delta keeps them.
    bool cpu_stacks = true;
};

class CaptureSum {
public:
    explicit CaptureSum(SumLimits limits = {}) : limits_(limits) {}

    // Adds an interval's capture: histograms merged, counters summed,
    // meta.duration_s the sum, meta.start_time the first interval's.
    void add(const Capture& slice);
    const Capture& capture() const { return sum_; }
    uint64_t intervals() const { return intervals_; }
    // Sites whose stack was filed under the full-table stack, and lock
    // records folded into "[other locks]".
    uint64_t stacksNotKept() const { return stacksNotKept_; }
    uint64_t locksFolded() const { return locksFolded_; }

private:
    uint32_t stackId(const Capture& slice, uint32_t sliceId);
    Lock& lockFor(const Lock& l);
    void addLock(const Capture& slice, const Lock& l);
    void addCpu(const Capture& slice);
    static void addLatencies(std::vector<LatencyEntry>& into, const std::vector<LatencyEntry>& from);

    SumLimits limits_;
    Capture sum_;
    uint64_t intervals_ = 0;
    uint64_t stacksNotKept_ = 0;
    uint64_t locksFolded_ = 0;
    // A stack by what its frames say (kind, then function, offset, module of each).
    using StackKey = std::pair<int, std::vector<std::tuple<std::string, uint64_t, std::string>>>;
    std::map<StackKey, uint32_t> stackIds_;
    std::map<std::string, size_t> lockIndex_;
    std::optional<uint32_t> fullStack_;
};

} // namespace lockscope::agent
