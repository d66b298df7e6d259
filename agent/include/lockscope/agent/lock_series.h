// SPDX-License-Identifier: GPL-2.0-or-later
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "lockscope/capture/capture.h"

// Per-lock counters for /metrics with bounded cardinality that never go
// backwards. The top `top` locks by wait time since start get their own
// series; every other lock adds to one lock="other" series. A lock's own
// series counts only what happened while it was in the top (it starts at
// zero when the lock enters it, resumes where it stopped if the lock comes
// back), and "other" counts everything else, so each series only grows and
// the series always add up to the total.
namespace lockscope::agent {

struct LockFigures {
    uint64_t contentions = 0;
    uint64_t wait_ns = 0;
    std::array<uint64_t, Log2Hist::kBuckets> wait_buckets{};
    uint64_t holds = 0;
    uint64_t hold_ns = 0;
    std::array<uint64_t, Log2Hist::kBuckets> hold_buckets{};
    void add(const Lock& lock);
};

struct LockSeriesEntry {
    std::string key;
    std::string type;
    std::string name;
    std::string cgroup;
    uint64_t ranking_wait_ns = 0; // every wait since start, shown or not: the rank
    bool shown = false;
    LockFigures figures;          // while shown
};

class LockSeries {
public:
    // Locks remembered beyond the shown ones (for their rank): `keep`; the
    // least waited beyond it are forgotten (locksForgotten()).
    explicit LockSeries(size_t top, size_t keep = 0);

    void add(const Capture& slice);

    std::vector<const LockSeriesEntry*> shown() const;
    const LockFigures& other() const { return other_; }
    uint64_t locksForgotten() const { return forgotten_; }

private:
    void rerank();

    size_t top_;
    size_t keep_;
    std::map<std::string, LockSeriesEntry> entries_; // by key and cgroup
    LockFigures other_;
    uint64_t forgotten_ = 0;
};

} // namespace lockscope::agent
