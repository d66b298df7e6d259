// SPDX-License-Identifier: GPL-2.0-or-later
#pragma once

// Runs one scenario of a pair with N worker threads for a fixed time.

#include <cstdint>
#include <string>
#include <vector>

#include "lockscope/capture/histogram.h"
#include "lockscope/scaling/pair.h"

namespace lockscope::scaling {

struct LockResult {
    std::string name, type;
    Log2Hist wait, hold;
};

struct PointResult {
    unsigned threads = 0;
    uint64_t ops = 0;
    double duration_s = 0;
    std::vector<LockResult> locks;
    std::string violation;  // from Scenario::check(); empty when the invariants held
    double opsPerSec() const { return duration_s > 0 ? static_cast<double>(ops) / duration_s : 0; }
};

PointResult runPoint(const PairInfo& pair, Variant variant, unsigned threads, double seconds, bool profiled);

// Runs exactly `opsPerThread` operations per thread (no timing): for tests.
PointResult runOps(const PairInfo& pair, Variant variant, unsigned threads, uint64_t opsPerThread,
                   bool profiled);

} // namespace lockscope::scaling
