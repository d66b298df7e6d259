// SPDX-License-Identifier: GPL-2.0-or-later
#pragma once

// The probes off unless asked for (capture.h's kOptInProbes) as options of
// record and agent: one set of flags, help texts and rules for both.

#include <cstdint>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "lockscope/probes/probes.h"

namespace lockscope::cli {

// Grouped by type (strings and lists, numbers, flags): no padding between.
struct OptInArgs {
    std::string syscall_backend = "auto";
    std::string hold_backend = "auto";
    std::vector<std::string> user_lock_specs;
    unsigned hold_sample = 1;
    // Above the probe's own time under emulation (a few hundred ns), below a
    // contended spin's (microseconds).
    uint64_t acquire_min_ns = 1000;
    unsigned syscall_sample = 1;
    // Each timed call costs two clock reads and a histogram update on top of
    // the hook; 20000 a second per CPU keeps p99 estimates dense while a
    // syscall-bound workload (10^6 calls/s per CPU) is timed 1 in ~50.
    unsigned syscall_budget = 20000;
    bool hold = false;
    bool no_hold = false;
    bool holder_stacks = false;
    bool syscalls = false; // --syscalls, or an option that implies it (foldSyscallAskers)
    bool no_syscalls = false;
    bool functions = false;
    bool no_functions = false;
    bool user_locks = false;
};

// The options addOptInOptions made that later rules refer to.
struct OptInOptions {
    std::vector<const CLI::Option*> syscall_askers; // each turns the syscall probe on
    CLI::Option* syscall_budget = nullptr;
    CLI::Option* syscall_sample = nullptr;
};

// A backend the family can be forced to; any other is a usage error.
probes::Backend parseBackend(const std::string& flag, const std::string& v, probes::HookFamily family);
// "force the wait hook: auto, tp_btf, raw_tp, tracepoint"
std::string backendHelp(const char* what, probes::HookFamily family);

// Adds the opt-in probes' options to cmd (record's and the agent's alike).
OptInOptions addOptInOptions(CLI::App& cmd, OptInArgs& a);
// In the command's callback: an option that implies --syscalls sets it.
void foldSyscallAskers(const OptInOptions& o, OptInArgs& a);
// Sets p's hold, syscall, function and user-lock probes from a; `exact`
// times every syscall (record --exact).
void applyOptIn(const OptInArgs& a, bool exact, probes::Options& p);

} // namespace lockscope::cli
