// SPDX-License-Identifier: GPL-2.0-or-later
// Holder stacks join two families: the wait probe scans the hold probe's
// per-CPU held stacks at contention_begin. Once every family is open, this
// decides whether that scan can run and records the outcome as a probe.
#include <algorithm>

#include "family.h"

namespace lockscope::probes::detail {

void settleHolderStacks(FamilyContext& ctx)
{
    if (!ctx.options.holder_stacks)
        return;
    auto find = [&](const char* name) -> const ProbeStatus* {
        auto it = std::find_if(
            ctx.status.begin(), ctx.status.end(), [&](const ProbeStatus& s) { return s.name == name; });
        return it == ctx.status.end() ? nullptr : &*it;
    };
    const ProbeStatus* wait = find("lock_contention");
    const ProbeStatus* hold = find("spin_hold");
    ProbeStatus st { "holder_stacks", "lock:contention_begin -> spin_hold held locks", "", false, "" };
    if (!hold || !hold->attached) {
        const std::string why = !hold ? "not opened" : hold->reason;
        st.reason = why == kProbeDisabled ? "needs the hold probe (fentry/kprobe), which is disabled"
                                      : "needs the hold probe (fentry/kprobe), which this kernel refuses: " + why;
    } else if (!wait || !wait->attached) {
        st.reason = "needs the lock_contention probe, which did not attach";
    } else {
        ctx.maps.enableHolderScan();
        st.attached = true;
        st.hook = hold->hook;
        st.reason = "spinlocks only; approximate: holders are read from other CPUs without synchronisation";
    }
    ctx.status.push_back(st);
}

} // namespace lockscope::probes::detail
