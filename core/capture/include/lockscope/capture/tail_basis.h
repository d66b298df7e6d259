// SPDX-License-Identifier: GPL-2.0-or-later
#pragma once

// What a wait histogram's tail figures (a percentile, the max) rest on. Under
// record's timing budget a hot lock's waits are timed 1 in N and the rest
// given the timed ones' times, except that every wait of at least
// meta.filters.exact_wait_ns is timed all the same (docs/capture-format.md,
// "Tails under the timing budget"). A figure in those buckets is exact; one
// below is an estimate from the timed waits, and judged only when enough of
// them lie beyond it. The one home of that rule: reports, compare and the
// GUI ask here.

#include <cstdint>
#include <string>

#include "lockscope/capture/capture.h"
#include "lockscope/capture/histogram.h"

namespace lockscope {

// The counts first and the flags together: 24 bytes, not 32 (a comparison
// holds one per lock row).
struct TailBasis {
    uint64_t timed = 0;  // waits timed (of `waits`) when estimated
    uint64_t waits = 0;
    bool exact = true; // from timed waits only, or in the buckets where every wait was timed
    bool verdict = true; // enough timed waits beyond the figure to judge a change of it by
    // "exact", or "est. from 1234 of 98765 timed"
    std::string text() const;
    bool operator==(const TailBasis&) const = default;
};

// Timed waits an estimated percentile needs beyond it before a comparison
// may call a change of it.
inline constexpr uint64_t kTimedBeyondForVerdict = 10;

// The meta.filters key record writes the exact-tail threshold under.
inline constexpr const char* kExactWaitNsFilter = "exact_wait_ns";

// meta.filters.wait_share: the share of the time the wait programs were
// attached when lockscope agent sampled them (above its --wait-rate-cap); the
// waits were scaled up by it, so none of them is exact. 1 when absent.
double waitShare(const Meta& meta);
// Sets it, and takes exact_wait_ns out: nothing in a sample of time is exact.
void markWaitsSampled(Meta& meta, double share);

// meta.filters.exact_wait_ns; 0 when absent (no budget, or an older capture).
uint64_t exactWaitNs(const Meta& meta);

// The p-th percentile (as Log2Hist::percentile) of wait, of which `untimed`
// waits were estimated; exact_ns as exactWaitNs.
TailBasis percentileBasis(const Log2Hist& wait, uint64_t untimed, uint64_t exact_ns, double p);

// wait.max(): exact when nothing was estimated or it lies where every wait was timed.
TailBasis maxBasis(const Log2Hist& wait, uint64_t untimed, uint64_t exact_ns);

} // namespace lockscope
