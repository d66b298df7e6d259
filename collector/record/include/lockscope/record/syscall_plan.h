// SPDX-License-Identifier: GPL-2.0-or-later
#pragma once

// Whether `lockscope record` times IPC/timer syscalls, and through which hook.

#include <string>
#include <vector>

#include "lockscope/probes/probes.h"

namespace lockscope::record {

struct SyscallPlan {
    probes::Backend backend = probes::Backend::Auto; // what the syscall probe may use
    std::string skipped; // non-empty: not timed, and why (for the status line and meta)
};

// asked: the user asked for syscall timing (--exact, --syscall-backend,
// --syscall-budget, --syscall-sample): `requested` is used as given, falling
// back as Auto does. Otherwise only a hook that leaves the other syscalls
// alone is used (fentry on stock kernels); where every usable hook would make
// every syscall on the machine pay, syscalls are not timed and skipped says
// why and how to turn it on. hooks: probes::syscallHooks().
SyscallPlan planSyscallTiming(bool asked, probes::Backend requested, const std::vector<probes::SyscallHook>& hooks);

} // namespace lockscope::record
