// SPDX-License-Identifier: GPL-2.0-or-later
#include "probe_args.h"

#include <algorithm>
#include <filesystem>
#include <optional>

namespace lockscope::cli {

namespace {

// --NAME and --no-NAME for a probe off unless asked for; returns --NAME
// (other options may imply it).
CLI::Option* addOptInProbe(CLI::App& cmd, const std::string& name, bool& on, bool& off, const std::string& help,
                           const std::string& offHelp)
{
    CLI::Option* yes = cmd.add_flag("--" + name, on, help);
    cmd.add_flag("--no-" + name, off, offHelp)->excludes(yes);
    return yes;
}

std::string libcPath()
{
    for (const char* p : {"/lib/x86_64-linux-gnu/libc.so.6", "/usr/lib/x86_64-linux-gnu/libc.so.6",
                          "/lib/aarch64-linux-gnu/libc.so.6", "/usr/lib64/libc.so.6", "/lib64/libc.so.6"})
        if (std::filesystem::exists(p))
            return p;
    return "libc.so.6";
}

// --user-lock BINARY:LOCK_FN:UNLOCK_FN[:TYPE]
probes::UserLockSpec parseUserLock(const std::string& spec)
{
    enum Field : size_t { kBinary, kLockFn, kUnlockFn, kType, kFields };
    std::vector<std::string> parts;
    size_t start = 0;
    for (size_t c; (c = spec.find(':', start)) != std::string::npos; start = c + 1)
        parts.push_back(spec.substr(start, c - start));
    parts.push_back(spec.substr(start));
    const bool typed = parts.size() == kFields;
    if ((parts.size() != kType && !typed) ||
        std::any_of(parts.begin(), parts.begin() + kType, [](const auto& p) { return p.empty(); }))
        throw CLI::ValidationError("--user-lock", "'" + spec + "': expected BINARY:LOCK_FN:UNLOCK_FN[:TYPE]");
    probes::UserLockSpec u;
    u.binary = parts[kBinary];
    u.lock_fn = parts[kLockFn];
    u.unlock_fn = parts[kUnlockFn];
    u.type = typed ? parts[kType] : "user-lock";
    return u;
}

void addHoldOptions(CLI::App& cmd, OptInArgs& a)
{
    addOptInProbe(cmd, "hold", a.hold, a.no_hold,
                  "time spin-lock holds (fentry/kprobe on every spin-lock acquisition in the system: dear on "
                  "lock-heavy loads; implied by the other hold options)",
                  "do not probe hold times (the default without --hold)");
    cmd.add_option("--hold-sample", a.hold_sample, "time 1 in N spin-lock holds (implies --hold)")
        ->check(CLI::Range(1u, 1000000u));
    cmd.add_option("--acquire-min-ns", a.acquire_min_ns,
                   "with --hold: time spin-lock acquisitions whose lock call took at least this long (the spin "
                   "the contention tracepoint may not report)")
        ->check(CLI::Range(uint64_t{1}, uint64_t{1000000000}))
        ->capture_default_str();
    cmd.add_option("--hold-backend", a.hold_backend, backendHelp("hold", probes::HookFamily::Hold) + " (implies --hold)");
    cmd.add_flag("--holder-stacks", a.holder_stacks,
                 "name the stack holding a spinlock while others waited (turns the hold probe on)");
}

OptInOptions addSyscallOptions(CLI::App& cmd, OptInArgs& a)
{
    OptInOptions o;
    o.syscall_askers.push_back(addOptInProbe(cmd, "syscalls", a.syscalls, a.no_syscalls,
                  "time IPC/timer syscalls (semtimedop, timer_gettime, ...; fentry, else raw_tp, which slows every "
                  "syscall on the machine): a hook on every call, dear on syscall-bound loads; implied by the "
                  "--syscall-* options",
                  "do not time IPC/timer syscalls (the default without --syscalls)"));
    o.syscall_budget = cmd.add_option("--syscall-budget", a.syscall_budget,
                   "time at most about N IPC/timer syscalls per second per CPU (default 20000); above that, 1 in "
                   "N calls of each syscall is timed, every call (and error) is counted, and the untimed ones are "
                   "given the times of the timed ones. 0: time every call (implies --syscalls)")
        ->check(CLI::Range(0u, 100000000u));
    o.syscall_sample = cmd.add_option("--syscall-sample", a.syscall_sample,
                   "time exactly 1 in N IPC/timer syscalls per thread instead of a budget (implies --syscalls)")
        ->check(CLI::Range(1u, 1000000u))
        ->excludes(o.syscall_budget);
    auto* backend = cmd.add_option("--syscall-backend", a.syscall_backend,
                   backendHelp("syscall", probes::HookFamily::Syscalls) + " (implies --syscalls)");
    o.syscall_askers.insert(o.syscall_askers.end(), {o.syscall_budget, o.syscall_sample, backend});
    return o;
}

} // namespace

probes::Backend parseBackend(const std::string& flag, const std::string& v, probes::HookFamily family)
{
    const std::optional<probes::Backend> b = probes::backendFromName(v);
    if (!b)
        throw CLI::ValidationError(flag, "unknown backend '" + v + "' (" + probes::backendNames() + ")");
    const std::vector<probes::Backend> allowed = probes::familyBackends(family);
    if (std::find(allowed.begin(), allowed.end(), *b) == allowed.end())
        throw CLI::ValidationError(flag, "must be " + probes::backendNames(allowed, " or "));
    return *b;
}

std::string backendHelp(const char* what, probes::HookFamily family)
{
    return std::string("force the ") + what + " hook: " + probes::backendNames(probes::familyBackends(family));
}

OptInOptions addOptInOptions(CLI::App& cmd, OptInArgs& a)
{
    cmd.option_defaults()->group("Probes off unless asked for (each hooks every call of what it times)");
    addHoldOptions(cmd, a);
    OptInOptions o = addSyscallOptions(cmd, a);
    addOptInProbe(cmd, "functions", a.functions, a.no_functions,
                  "time the kernel functions that look up and lock IPC and timer objects (__lock_timer, "
                  "ipc_obtain_object_check, ...): every call, through fentry or kprobes",
                  "do not time those functions (the default)");
    cmd.add_flag("--user-locks", a.user_locks, "also probe pthread_mutex_lock/unlock (uprobes)");
    cmd.add_option("--user-lock", a.user_lock_specs,
                   "probe a user lock: BINARY:LOCK_FN:UNLOCK_FN[:TYPE] (a wait counts when LOCK_FN returns 0)")
        ->allow_extra_args(false);
    return o;
}

void foldSyscallAskers(const OptInOptions& o, OptInArgs& a)
{
    for (const CLI::Option* asked : o.syscall_askers)
        a.syscalls = a.syscalls || asked->count() > 0;
}

void applyOptIn(const OptInArgs& a, bool exact, probes::Options& p)
{
    p.hold_sample = a.hold_sample;
    p.acquire_min_ns = a.acquire_min_ns;
    p.holder_stacks = a.holder_stacks;
    // The wait probe names a holder by finding the lock among the hold probe's held locks.
    if (a.holder_stacks && a.no_hold)
        throw CLI::ValidationError("--holder-stacks", "needs the hold probe: drop --no-hold");
    if (a.holder_stacks && a.hold_sample > 1)
        throw CLI::ValidationError("--holder-stacks",
                                   "needs every spin-lock acquisition seen: drop --hold-sample");
    // Off unless asked for (probes::Options::hold); a hold option asks for it.
    const bool holds = a.hold || a.holder_stacks || a.hold_sample > 1 || a.hold_backend != "auto";
    if (holds && !a.no_hold)
        p.hold = parseBackend("--hold-backend", a.hold_backend, probes::HookFamily::Hold);
    p.syscalls = (a.syscalls || exact) && !a.no_syscalls; // off unless asked for (probes::Options::syscalls)
    p.syscall_sample = a.syscall_sample;
    p.syscall_budget = exact || a.syscall_sample > 1 ? 0 : a.syscall_budget;
    p.syscall_backend = parseBackend("--syscall-backend", a.syscall_backend, probes::HookFamily::Syscalls);
    if (a.functions && !a.no_functions)
        p.functions = probes::Backend::Auto; // off unless asked for (probes::Options::functions)
    if (a.user_locks)
        p.user_locks.push_back({libcPath(), "pthread_mutex_lock", "pthread_mutex_unlock", "pthread-mutex"});
    for (const auto& spec : a.user_lock_specs)
        p.user_locks.push_back(parseUserLock(spec));
}

} // namespace lockscope::cli
