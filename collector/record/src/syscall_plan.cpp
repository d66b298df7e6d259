// SPDX-License-Identifier: GPL-2.0-or-later
#include "lockscope/record/syscall_plan.h"

namespace lockscope::record {

SyscallPlan planSyscallTiming(bool asked, probes::Backend requested, const std::vector<probes::SyscallHook>& hooks)
{
    if (asked)
        return { requested, {} };
    std::string refusals;
    for (const probes::SyscallHook& h : hooks) {
        if (h.every_syscall_pays)
            continue;
        if (h.refused.empty())
            return { h.backend, {} };
        refusals += (refusals.empty() ? "" : "; ") + std::string(probes::backendName(h.backend)) + " refused: " + h.refused;
    }
    return { probes::Backend::Off,
        "syscall latency not timed by default: " + (refusals.empty() ? std::string("no per-syscall hook") : refusals)
            + ", and a raw_tp or tracepoint hook slows every syscall on the machine (25-31% of a syscall-bound "
              "workload); --exact or --syscall-backend raw_tp times them" };
}

} // namespace lockscope::record
