// SPDX-License-Identifier: GPL-2.0-or-later
// `lockscope record`: attach the probes, run or watch a target, write a capture.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <memory>
#include <optional>
#include <string>
#include <unistd.h>
#include <vector>

#include "commands.h"
#include "lockscope/capture/io.h"
#include "lockscope/record/cgroup_paths.h"
#include "lockscope/record/recorder.h"
#include "lockscope/record/run_as.h"
#include "lockscope/reports/format.h"
#include "lockscope/reports/render.h"
#include "lockscope/util/output_file.h"

namespace lockscope::cli {
namespace {

// Grouped by type (strings and lists, numbers, flags): no padding between.
struct RecordArgs {
    std::string output;
    std::string comm;
    std::string cgroup;
    std::string syscall_backend = "auto";
    std::string wait_backend = "auto";
    std::string hold_backend = "auto";
    std::string label;
    std::vector<int> pids;
    std::vector<std::string> lock_types;
    std::vector<std::string> locks;
    std::vector<std::string> stack_contains;
    std::vector<std::string> user_lock_specs;
    std::vector<std::string> command;

    double duration = 0;
    double grace = 5;
    unsigned stack_depth = 16;
    unsigned hold_sample = 1;
    // Above the probe's own time under emulation (a few hundred ns), below a
    // contended spin's (microseconds).
    uint64_t acquire_min_ns = 1000;
    unsigned syscall_sample = 1;
    unsigned stack_sample = 1;
    // ~2 us per walk: at most ~0.2% of each CPU goes to stack walks, and a
    // few thousand call paths a second per CPU is plenty to rank callers.
    unsigned stack_budget = 1000;
    // A clock read at contention_end lengthens the critical section the
    // other waiters queue behind; this many timed waits a second per CPU
    // keep histograms dense while a lock contending at 10^5-10^6/s is timed
    // 1 in N (bench/record/README.md).
    unsigned timing_budget = 20000;
    // Each timed call costs two clock reads and a histogram update on top of
    // the hook; 20000 a second per CPU keeps p99 estimates dense while a
    // syscall-bound workload (10^6 calls/s per CPU) is timed 1 in ~50.
    unsigned syscall_budget = 20000;
    unsigned freq = probes::Options {}.cpu_frequency_hz;

    bool all = false;
    bool per_tgid = false;
    bool per_cgroup = false;
    bool lock_names = true;
    bool hold = false;
    bool no_hold = false;
    bool holder_stacks = false;
    bool lock_owner = false;
    bool no_cpu = false;
    bool syscalls = false; // --syscalls, or an option that implies it (the callback folds them in)
    bool no_syscalls = false;
    bool functions = false;
    bool no_functions = false;
    bool exact = false; // every wait and every syscall timed
    bool user_locks = false;
    bool user_stacks = false;
    bool as_root = false;
    bool stop_on_stdin_close = false;
};

// A backend the family can be forced to; any other is a usage error.
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

// "force the wait hook: auto, tp_btf, raw_tp, tracepoint"
std::string backendHelp(const char* what, probes::HookFamily family)
{
    return std::string("force the ") + what + " hook: " + probes::backendNames(probes::familyBackends(family));
}

// --NAME and --no-NAME for a probe off unless asked for; returns --NAME
// (other options may imply it).
CLI::Option* addOptInProbe(CLI::App& cmd, const std::string& name, bool& on, bool& off, const std::string& help,
                           const std::string& offHelp)
{
    CLI::Option* yes = cmd.add_flag("--" + name, on, help);
    cmd.add_flag("--no-" + name, off, offHelp)->excludes(yes);
    return yes;
}

std::string defaultOutput()
{
    std::time_t now = std::time(nullptr);
    std::tm tm{};
    localtime_r(&now, &tm);
    char buf[64];
    std::strftime(buf, sizeof buf, "lockscope-%Y%m%d-%H%M%S.lockscope.json", &tm);
    return buf;
}

// The exact argv, for the capture's meta.command (CLI11 does not keep it).
std::vector<std::string> ownCommandLine()
{
    std::ifstream in("/proc/self/cmdline", std::ios::binary);
    std::vector<std::string> argv;
    std::string arg;
    while (std::getline(in, arg, '\0'))
        argv.push_back(arg);
    return argv;
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

// What to run or watch, and how to stop it.
void setTargets(const RecordArgs& a, const std::vector<std::string>& argv, record::RecordOptions& o)
{
    o.command = a.command;
    for (int p : a.pids)
        o.pids.push_back(pid_t(p));
    o.all = a.all;
    o.duration_s = a.duration;
    o.label = a.label;
    o.command_line = argv;
    o.kill_grace_s = a.grace;
    o.stop_on_stdin_close = a.stop_on_stdin_close;
    if (!a.as_root && !a.command.empty())
        o.run_as = record::invokingUserCredentials();
    if (o.command.empty() && o.pids.empty() && !o.all && a.comm.empty())
        throw CLI::ValidationError("target", "nothing to record: give -- CMD ARGS, -p PID, -a or --comm NAME");
    if (!o.command.empty() && (!o.pids.empty() || o.all))
        throw CLI::ValidationError("target", "-- CMD cannot be combined with -p or -a");
    if (o.all && a.duration <= 0)
        std::fprintf(stderr, "lockscope record: -a without -d records until Ctrl-C\n");
}

// Which tasks and locks: --comm, --cgroup, --per-*, --lock-type, --lock, --stack-contains.
void setSelection(const RecordArgs& a, record::RecordOptions& o)
{
    auto& p = o.probe;
    p.comm = a.comm;
    p.per_tgid = a.per_tgid;
    p.per_cgroup = a.per_cgroup;
    p.lock_names = a.lock_names;
    try {
        if (a.per_cgroup)
            record::cgroup2Mount();
        if (!a.cgroup.empty()) {
            const record::CgroupTarget t = record::cgroupTarget(a.cgroup);
            p.cgroup_id = t.id;
            p.cgroup_level = t.level;
            o.cgroup = a.cgroup;
        }
    } catch (const record::CgroupError& e) {
        throw CLI::ValidationError(a.per_cgroup && a.cgroup.empty() ? "--per-cgroup" : "--cgroup", e.what());
    }
    o.locks = {a.lock_types, a.locks};
    try {
        record::selectLocks(o.locks, o.assemble);
    } catch (const record::RecordError& e) {
        throw CLI::ValidationError("--lock", e.what());
    }
    o.assemble.stack_contains = a.stack_contains;
}

// Holds, holder stacks and lock owners.
void setHoldOptions(const RecordArgs& a, probes::Options& p)
{
    p.hold_sample = a.hold_sample;
    p.acquire_min_ns = a.acquire_min_ns;
    p.holder_stacks = a.holder_stacks;
    p.lock_owner = a.lock_owner;
    // The wait probe names a holder by finding the lock among the hold probe's held locks.
    if (a.holder_stacks && a.no_hold)
        throw CLI::ValidationError("--holder-stacks", "needs the hold probe: drop --no-hold");
    if (a.holder_stacks && a.hold_sample > 1)
        throw CLI::ValidationError("--holder-stacks",
                                   "needs every spin-lock acquisition seen: drop --hold-sample");
    // Off unless asked for (probes::Options::hold); a hold option asks for it.
    const bool wanted = a.hold || a.holder_stacks || a.hold_sample > 1 || a.hold_backend != "auto";
    if (wanted && !a.no_hold)
        p.hold = parseBackend("--hold-backend", a.hold_backend, probes::HookFamily::Hold);
}

// Stack walks, timing budgets, syscalls, CPU sampling, hooks and user space.
void setCostOptions(const RecordArgs& a, record::RecordOptions& o)
{
    auto& p = o.probe;
    p.stack_depth = a.stack_depth;
    p.stack_sample = a.stack_sample;
    p.stack_budget = a.stack_sample > 1 ? 0 : a.stack_budget;
    p.timing_budget = a.exact ? 0 : a.timing_budget;
    p.syscalls = a.syscalls && !a.no_syscalls; // off unless asked for (probes::Options::syscalls)
    if (a.functions)
        p.functions = probes::Backend::Auto; // off unless asked for (probes::Options::functions)
    p.syscall_sample = a.syscall_sample;
    p.syscall_budget = a.exact || a.syscall_sample > 1 ? 0 : a.syscall_budget;
    p.syscall_backend = parseBackend("--syscall-backend", a.syscall_backend, probes::HookFamily::Syscalls);
    p.cpu_frequency_hz = a.no_cpu ? 0 : a.freq;
    p.wait = parseBackend("--wait-backend", a.wait_backend, probes::HookFamily::Wait);
    p.user_stacks = a.user_stacks;
    if (a.user_locks)
        p.user_locks.push_back({libcPath(), "pthread_mutex_lock", "pthread_mutex_unlock", "pthread-mutex"});
    for (const auto& spec : a.user_lock_specs)
        p.user_locks.push_back(parseUserLock(spec));
}

record::RecordOptions buildOptions(const RecordArgs& a, const std::vector<std::string>& argv)
{
    record::RecordOptions o;
    setTargets(a, argv, o);
    setSelection(a, o);
    setHoldOptions(a, o.probe);
    setCostOptions(a, o);
    return o;
}

// Groups of --help, in this order; each add*Options sets its group first.
void helpGroup(CLI::App& cmd, const char* name)
{
    cmd.option_defaults()->group(name);
}

void addTargetOptions(CLI::App& cmd, RecordArgs& a)
{
    helpGroup(cmd, "What to record");
    cmd.add_option("-o,--output", a.output, "capture file (default lockscope-<timestamp>.lockscope.json)");
    cmd.add_option("-p,--pid", a.pids, "record these processes (and their new children)")
        ->check(CLI::PositiveNumber)
        ->allow_extra_args(false);
    cmd.add_flag("-a,--all", a.all, "record every process");
    cmd.add_option("-d,--duration", a.duration, "stop after SECONDS")->check(CLI::PositiveNumber);
    cmd.add_option("--comm", a.comm, "only tasks with this command name");
    cmd.add_option("--label", a.label, "a name for this capture (baseline, patched, ...)");
    cmd.add_option("command", a.command, "the workload, after --");
}

void addSelectionOptions(CLI::App& cmd, RecordArgs& a)
{
    helpGroup(cmd, "Which locks, and how they are keyed");
    cmd.add_option("--lock-type", a.lock_types,
                   "only these lock types: spinlock, rwlock[:R|:W], mutex, mutex:spin (got it by optimistic "
                   "spinning), rwsem[:R|:W], percpu-rwsem, rtmutex, semaphore; a base name matches all its modes")
        ->allow_extra_args(false);
    cmd.add_option("--lock", a.locks,
                   "only this lock: a key (spinlock@sem_lock), a name (mmap_lock, &task_struct) or 0xADDRESS; when every "
                   "--lock is an address or a global lock's key (rename_lock+0x4) the kernel filters")
        ->allow_extra_args(false);
    cmd.add_option("--stack-contains", a.stack_contains, "only stacks with a function containing FUNC")
        ->allow_extra_args(false);
    cmd.add_option("--cgroup", a.cgroup,
                   "only tasks in this cgroup v2 or below it: a path under the cgroup2 root (/system.slice/x) "
                   "or its directory (/sys/fs/cgroup/...); filtered in the kernel");
    cmd.add_flag("--per-tgid", a.per_tgid, "keep locks apart per process (key#tgid)");
    cmd.add_flag("--per-cgroup", a.per_cgroup,
                 "keep locks apart per cgroup v2 of the waiting or holding task (key#/cgroup/path; the lock's cgroup)");
    cmd.add_flag("--lock-names,!--no-lock-names", a.lock_names,
                 "name each lock beside its key, where the kernel lets us know: its global symbol, mmap_lock, "
                 "siglock, rq_lock, or the slab cache of its object (&task_struct); --lock then matches names too "
                 "(on unless --no-lock-names)");
    cmd.add_flag("--lock-owner", a.lock_owner,
                 "name the owner task of a contended mutex or writer-owned rwsem, and its kernel stack "
                 "when the wait began (where the holder was)");
}

// The options that bound what recording costs; returns {--exact, --syscall-budget}.
std::pair<CLI::Option*, CLI::Option*> addCostOptions(CLI::App& cmd, RecordArgs& a)
{
    helpGroup(cmd, "Cost and precision");
    cmd.add_option("--stack-depth", a.stack_depth,
                   "frames kept after the lock internals; 0: no stacks (cheapest: a stack walk costs ~2 us "
                   "per contended wait, whatever the depth; locks of one type then share one key, <type>@unknown)")
        ->check(CLI::Range(0u, 127u));
    auto* budget = cmd.add_option("--stack-budget", a.stack_budget,
                   "walk at most N stacks per second per CPU, for waits and for holds each (default 1000, ~0.2% "
                   "of a CPU); above that, an even sample is walked. Every wait and hold is still counted (and "
                   "timed, within --timing-budget), the rest under a '[stack not sampled]' path of their lock. "
                   "0: walk every stack")
        ->check(CLI::Range(0u, 100000000u));
    cmd.add_option("--stack-sample", a.stack_sample,
                   "walk the stack of exactly 1 in N contended waits per CPU instead of a budget")
        ->check(CLI::Range(1u, 1000000u))
        ->excludes(budget);
    auto* timingBudget = cmd.add_option("--timing-budget", a.timing_budget,
                   "time at most about N contended waits per second per CPU (default 20000); above "
                   "that, 1 in N waits on each lock is timed, every one is counted, and the untimed ones are "
                   "given the times of the timed ones. 0: time every wait (--holder-stacks does)")
        ->check(CLI::Range(0u, 100000000u));
    auto* scBudget = cmd.add_option("--syscall-budget", a.syscall_budget,
                   "time at most about N IPC/timer syscalls per second per CPU (default 20000); above that, 1 in "
                   "N calls of each syscall is timed, every call (and error) is counted, and the untimed ones are "
                   "given the times of the timed ones. 0: time every call (implies --syscalls)")
        ->check(CLI::Range(0u, 100000000u));
    auto* exact = cmd.add_flag("--exact", a.exact,
                   "time every contended wait and every IPC/timer syscall (--timing-budget 0 --syscalls "
                   "--syscall-budget 0): exact histograms, at a higher cost on busy workloads")
        ->excludes(timingBudget)
        ->excludes(scBudget);
    cmd.add_flag("--no-cpu", a.no_cpu, "do not sample on-CPU stacks");
    cmd.add_option("--freq", a.freq,
                   "CPU sampling frequency in Hz per CPU (default " + std::to_string(a.freq) +
                       "; each sample is a timer interrupt, which a VM makes dear)")
        ->check(CLI::Range(1u, 100000u));
    return {exact, scBudget};
}

// The probes off unless asked for (kOptInProbes) and their options; returns
// every option that asks for syscall timing.
std::vector<const CLI::Option*> addOptInOptions(CLI::App& cmd, RecordArgs& a, CLI::Option* exact,
                                                CLI::Option* scBudget)
{
    helpGroup(cmd, "Probes off unless asked for (each hooks every call of what it times)");
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
    cmd.add_flag("--holder-stacks", a.holder_stacks,
                 "name the stack holding a spinlock while others waited (turns the hold probe on)");
    auto* syscalls = addOptInProbe(cmd, "syscalls", a.syscalls, a.no_syscalls,
                  "time IPC/timer syscalls (semtimedop, timer_gettime, ...; fentry, else raw_tp, which slows every "
                  "syscall on the machine): a hook on every call, dear on syscall-bound loads; implied by --exact "
                  "and the --syscall-* options",
                  "do not time IPC/timer syscalls (the default without --syscalls)");
    auto* scSample = cmd.add_option("--syscall-sample", a.syscall_sample,
                   "time exactly 1 in N IPC/timer syscalls per thread instead of a budget (implies --syscalls)")
        ->check(CLI::Range(1u, 1000000u))
        ->excludes(scBudget)
        ->excludes(exact);
    auto* scBackend = cmd.add_option("--syscall-backend", a.syscall_backend,
                   backendHelp("syscall", probes::HookFamily::Syscalls) + " (implies --syscalls)");
    addOptInProbe(cmd, "functions", a.functions, a.no_functions,
                  "time the kernel functions that look up and lock IPC and timer objects (__lock_timer, "
                  "ipc_obtain_object_check, ...): every call, through fentry or kprobes",
                  "do not time those functions (the default)");
    cmd.add_flag("--user-locks", a.user_locks, "also probe pthread_mutex_lock/unlock (uprobes)");
    cmd.add_option("--user-lock", a.user_lock_specs,
                   "probe a user lock: BINARY:LOCK_FN:UNLOCK_FN[:TYPE] (a wait counts when LOCK_FN returns 0)")
        ->allow_extra_args(false);
    return {syscalls, exact, scBudget, scSample, scBackend};
}

void addMiscOptions(CLI::App& cmd, RecordArgs& a)
{
    helpGroup(cmd, "Hooks, stacks and the workload");
    cmd.add_option("--wait-backend", a.wait_backend, backendHelp("wait", probes::HookFamily::Wait));
    cmd.add_option("--hold-backend", a.hold_backend, backendHelp("hold", probes::HookFamily::Hold));
    cmd.add_flag("--user-stacks", a.user_stacks,
                 "take the waiter's user stack too (walked by frame pointers: a binary built without them "
                 "shows its innermost frame only)");
    cmd.add_flag("--as-root", a.as_root,
                 "under sudo/pkexec, run the workload as root too (by default it runs as the invoking user)");
    cmd.add_option("--grace", a.grace,
                   "when stopping the workload (-d, Ctrl-C, SIGTERM), seconds between SIGTERM to its process "
                   "group and SIGKILL (default 5)")
        ->check(CLI::Range(0.0, 3600.0));
    cmd.add_flag("--stop-on-stdin-close", a.stop_on_stdin_close,
                 "stop as on SIGTERM when standard input reaches end of file (the GUI's Stop button; the workload "
                 "then reads /dev/null)");
}

// What record prints after the capture is written: the top locks and notes.
void printSummary(const Capture& capture, const std::string& output)
{
    std::fprintf(stderr, "\n%s", reports::topLocksTable(capture).c_str());
    if (capture.cpu.samples)
        std::fprintf(stderr, "CPU in spin-lock functions: %s of %llu samples\n",
                     reports::fmt::percent(capture.cpu.lockShare(), 1).c_str(),
                     static_cast<unsigned long long>(capture.cpu.samples));
    if (auto hidden = reports::hiddenSpinWaits(capture); !hidden.empty())
        std::fprintf(stderr, "note: %s\n", hidden.c_str());
    if (capture.workload.signal)
        std::fprintf(stderr, "workload killed by signal %d\n", *capture.workload.signal);
    else if (capture.workload.exit_status && *capture.workload.exit_status != 0)
        std::fprintf(stderr, "workload exited with status %d\n", *capture.workload.exit_status);
    std::fprintf(stderr, "capture written to %s\n", output == "-" ? "standard output" : output.c_str());
}

// Records, writes the capture, prints the summary; a failure is one line and exit 1.
void recordAndSummarize(const RecordArgs& a, Result& result)
{
    record::RecordOptions options = buildOptions(a, ownCommandLine());
    const std::string output = a.output.empty() ? defaultOutput() : a.output;
    Capture capture;
    try {
        // Before any probe attaches: a bad -o fails now, not after the recording.
        util::OutputFile out(output, 0600);
        if (out.isStdout())
            options.workload_output_fd = STDERR_FILENO; // stdout carries the capture
        capture = record::runRecord(options, stderr);
        // Compact: the format every lockscope since version 2 reads, a fraction
        // of the size; `lockscope convert --capture-version 1` serves older ones.
        writeCapture(capture, out, WriteOptions { .layout = CaptureLayout::Compact });
    } catch (const record::RecordError& e) {
        std::fprintf(stderr, "lockscope record: %s\n", e.what());
        result.exit_code = 1;
        return;
    } catch (const util::FileError& e) { // -o refused before recording
        std::fprintf(stderr, "lockscope record: cannot write the capture: %s\n", e.what());
        result.exit_code = 1;
        return;
    } catch (const CaptureError& e) {
        std::fprintf(stderr, "lockscope record: cannot write the capture: %s\n", e.what());
        result.exit_code = 1;
        return;
    }
    printSummary(capture, output);
}

} // namespace

void addRecordCommand(CLI::App& app, Result& result)
{
    auto args = std::make_shared<RecordArgs>();
    auto* cmd = app.add_subcommand("record", "Record kernel lock contention while a workload runs");
    cmd->footer("Examples:\n"
                "  sudo lockscope record -o a.lockscope.json -- semop-multi --multi --threads 8\n"
                "  sudo lockscope record -a -d 10 --label baseline\n"
                "  sudo lockscope record -p 1234 --lock-type spinlock --stack-contains sem\n"
                "  sudo lockscope record --syscalls --hold -- semop-multi --multi --threads 8");
    addTargetOptions(*cmd, *args);
    addSelectionOptions(*cmd, *args);
    auto [exact, scBudget] = addCostOptions(*cmd, *args);
    const auto syscallAskers = addOptInOptions(*cmd, *args, exact, scBudget);
    addMiscOptions(*cmd, *args);
    cmd->callback([args, &result, syscallAskers]() {
        for (const CLI::Option* asked : syscallAskers)
            args->syscalls = args->syscalls || asked->count() > 0;
        recordAndSummarize(*args, result);
    });
}

} // namespace lockscope::cli
