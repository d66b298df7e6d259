// SPDX-License-Identifier: GPL-2.0-or-later
#include "warnings.h"

namespace lockscope::reports {

std::vector<std::string> captureWarnings(const Capture& c, const std::string& side)
{
    std::vector<std::string> w;
    const std::string p = side.empty() ? "" : side + ": ";
    auto counter = [&](uint64_t n, const char* what, const char* effect) {
        if (n)
            w.push_back(p + std::to_string(n) + " " + what + " — " + effect);
    };
    counter(c.stats.lost, "events lost", "counts and wait totals undercount");
    counter(c.stats.map_full, "map-full drops", "some locks or stacks are missing; raise the map sizes");
    counter(c.stats.stack_failures, "stack captures failed", "those events have no call path");
    counter(c.stats.unmatched, "unmatched end events", "waits or holds that began before the capture started");
    counter(c.stats.recursion_misses, "probe runs skipped by the kernel (re-entry)", "counts undercount");
    counter(c.stats.impossible_holds, "holds released before they were acquired, dropped",
        "hold counts undercount by that many");
    counter(c.stats.waits_untimed, "contended waits counted but not timed (timing budget)",
        "their wait times are estimated from the timed waits of their lock; record --timing-budget 0 times every one");
    counter(c.stats.syscalls_untimed, "syscalls counted but not timed (syscall timing budget)",
        "their latencies are estimated from the timed calls of the same syscall; record --exact times every one");
    counter(c.stats.owner_stacks_unsampled, "lock owners named without their stack (stack budget)",
        "the holder flame graph misses where they were; record --stack-budget 0 walks every one");
    counter(c.stats.cpu_unstacked, "CPU samples counted by their function alone (no stack kept)",
        "the CPU share counts them; the CPU stacks miss them");
    const bool syscallsSkipped = !c.meta.syscall_timing_skipped.empty();
    if (syscallsSkipped) // the "syscalls" probe's skip line says the same: one line, not two
        w.push_back(p + c.meta.syscall_timing_skipped);
    for (const auto& probe : c.probes)
        if (!probe.attached && !(syscallsSkipped && probe.name == "syscalls"))
            w.push_back(p + "probe " + probe.name + (probe.target.empty() ? "" : " (" + probe.target + ")") + " skipped: " +
                        (probe.reason.empty() ? std::string("no reason recorded") : probe.reason));
    if (c.locks.empty() && c.syscalls.empty() && c.functions.empty() && c.cpu.samples == 0)
        w.push_back(p + "the capture holds no lock, syscall or CPU data (was the workload contended?)");
    return w;
}

} // namespace lockscope::reports
