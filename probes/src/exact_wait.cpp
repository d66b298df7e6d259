// SPDX-License-Identifier: GPL-2.0-or-later
// The wait length from which the wait probe times every wait under the
// timing budget (wait.bpf.c, exact_wait_ns): it sees a long wait by the
// coarse clock's tick, so no wait of a tick and the tick's own lateness can
// pass unseen; 1.5 ticks, rounded up to a power of two so the exact part of
// a histogram is whole log2 buckets.
#include <bit>
#include <ctime>

#include "lockscope/probes/probes.h"

namespace lockscope::probes {

uint64_t exactWaitNs()
{
    constexpr uint64_t kTickIfUnknown = 10'000'000; // HZ=100, the longest tick Linux has
    timespec res {};
    uint64_t tick = kTickIfUnknown;
    if (clock_getres(CLOCK_MONOTONIC_COARSE, &res) == 0 && res.tv_sec == 0 && res.tv_nsec > 0)
        tick = static_cast<uint64_t>(res.tv_nsec);
    return std::bit_ceil(tick + tick / 2);
}

} // namespace lockscope::probes
