// SPDX-License-Identifier: GPL-2.0-or-later
#include "warnings.h"

#include "lockscope/capture/virtualization.h"
#include "lockscope/reports/render.h"

#include <algorithm>

namespace lockscope::reports {

namespace {

bool spinningType(const std::string& type) { return type == "spinlock" || type.rfind("rwlock", 0) == 0; }

} // namespace

// An empty lock table must not read as "no spinlock contention" where the
// kernel does not report spinning waits (docs/recording.md).
std::string hiddenSpinWaits(const Capture& c)
{
    const bool waitProbe = std::any_of(c.probes.begin(), c.probes.end(),
        [](const ProbeStatus& p) { return p.name == "lock_contention" && p.attached; });
    // A lock filter leaves spinlocks out of the table on purpose.
    const bool filtered = c.meta.filters.count("lock") || c.meta.filters.count("lock_type") ||
                          c.meta.filters.count("stack_contains");
    if (!waitProbe || filtered || c.cpu.samples < 100 || c.cpu.lock_samples * 20 < c.cpu.samples)
        return {};
    bool acquires = false;
    for (const auto& l : c.locks) {
        if (spinningType(l.type) && l.wait.count() > 0)
            return {};
        acquires = acquires || (spinningType(l.type) && !l.acquire.empty());
    }
    return std::to_string(c.cpu.lock_samples * 100 / c.cpu.samples) +
           "% of CPU samples spin in spinlock code, yet no spinning lock wait was reported: this kernel's spinlock "
           "waits do not reach lock:contention_begin (a VM without paravirt spinlocks spins in a test-and-set "
           "loop; with 2 CPUs a lone waiter spins on the qspinlock pending bit); " +
           std::string(acquires ? "the acquire times (the spin in each lock call, from the hold probe) show that "
                                  "contention"
                                : "the CPU share and its stacks show that contention");
}

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
    counter(c.stats.map_busy, "busy-map drops", "events lost where a probe interrupted a map operation on its CPU");
    counter(c.stats.stack_failures, "stack captures failed", "those events have no call path");
    counter(c.stats.unmatched, "unmatched end events", "waits or holds that began before the capture started");
    counter(c.stats.recursion_misses, "probe runs skipped by the kernel (re-entry)", "counts undercount");
    counter(c.stats.impossible_holds, "holds released before they were acquired, dropped",
        "hold counts undercount by that many");
    counter(c.stats.cpu_unstacked, "CPU samples counted by their function alone (no stack kept)",
        "the CPU share counts them; the CPU stacks miss them");
    const bool syscallsSkipped = !c.meta.syscall_timing_skipped.empty(); // captures before --syscalls
    if (syscallsSkipped) // the "syscalls" probe's skip line says the same: one line, not two
        w.push_back(p + c.meta.syscall_timing_skipped);
    for (const auto& probe : c.probes)
        if (!probe.attached && !offByChoice(probe) && !(syscallsSkipped && probe.name == "syscalls"))
            w.push_back(p + "probe " + probe.name + (probe.target.empty() ? "" : " (" + probe.target + ")") + " skipped: " +
                        (probe.reason.empty() ? std::string("no reason recorded") : probe.reason));
    if (auto spin = hiddenSpinWaits(c); !spin.empty())
        w.push_back(p + spin);
    if (auto caveat = timesCaveat(c.meta.virtualization); !caveat.empty())
        w.push_back(p + caveat);
    if (c.locks.empty() && c.syscalls.empty() && c.functions.empty() && c.cpu.samples == 0)
        w.push_back(p + "the capture holds no lock, syscall or CPU data (was the workload contended?)");
    return w;
}

std::vector<std::string> captureNotes(const Capture& c, const std::string& side)
{
    std::vector<std::string> n;
    const std::string p = side.empty() ? "" : side + ": ";
    auto counter = [&](uint64_t count, const char* what, const char* effect) {
        if (count)
            n.push_back(p + std::to_string(count) + " " + what + " — " + effect);
    };
    counter(c.stats.stacks_unsampled, "waits and holds counted and timed but not walked (stack budget)",
        "each lock's call paths share them out in proportion to its walked ones; record --stack-budget 0 walks every one");
    counter(c.stats.waits_untimed, "contended waits counted but not timed (timing budget)",
        "their wait times are estimated from the timed waits of their lock; record --timing-budget 0 times every one");
    counter(c.stats.syscalls_untimed, "syscalls counted but not timed (syscall timing budget)",
        "their latencies are estimated from the timed calls of the same syscall; record --exact times every one");
    counter(c.stats.owner_stacks_unsampled, "lock owners named without their stack (stack budget)",
        "the holder flame graph misses where they were; record --stack-budget 0 walks every one");
    return n;
}

} // namespace lockscope::reports
