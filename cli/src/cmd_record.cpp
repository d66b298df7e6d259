// SPDX-License-Identifier: GPL-2.0-or-later
// `lockscope record`: attach the probes, run or watch a target, write a capture.
#include <chrono>
#include <cstdio>
#include <ctime>
#include <fstream>
#include <memory>
#include <string>
#include <unistd.h>
#include <vector>

#include "commands.h"
#include "option_checks.h"
#include "probe_args.h"
#include "lockscope/capture/io.h"
#include "lockscope/record/cgroup_paths.h"
#include "lockscope/record/recorder.h"
#include "lockscope/record/run_as.h"
#include "lockscope/reports/format.h"
#include "lockscope/reports/render.h"
#include "lockscope/util/output_file.h"

namespace lockscope::cli {
namespace {

// The kernel's PID_MAX_LIMIT on 64-bit: no pid_max setting goes above it.
constexpr int kPidMaxLimit = 4 * 1024 * 1024;

// Grouped by type (strings and lists, numbers, flags): no padding between.
struct RecordArgs {
    std::string output;
    std::string comm;
    std::string cgroup;
    std::string wait_backend = "auto";
    std::string label;
    std::vector<int> pids;
    std::vector<std::string> lock_types;
    std::vector<std::string> locks;
    std::vector<std::string> stack_contains;
    std::vector<std::string> command;
    OptInArgs optin;

    double duration = 0;
    double grace = 5;
    unsigned stack_depth = 16;
    unsigned stack_sample = 1;
    // ~2 us per walk: at most ~0.2% of each CPU goes to stack walks, and a
    // few thousand call paths a second per CPU is plenty to rank callers.
    unsigned stack_budget = 1000;
    // A clock read at contention_end lengthens the critical section the
    // other waiters queue behind; this many timed waits a second per CPU
    // keep histograms dense while a lock contending at 10^5-10^6/s is timed
    // 1 in N (bench/record/README.md).
    unsigned timing_budget = 20000;
    unsigned freq = probes::Options {}.cpu_frequency_hz;

    bool all = false;
    bool per_tgid = false;
    bool per_cgroup = false;
    bool lock_names = true;
    bool lock_owner = false;
    bool no_cpu = false;
    bool exact = false; // every wait and every syscall timed
    bool user_stacks = false;
    bool as_root = false;
    bool stop_on_stdin_close = false;
};

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

// Stack walks, timing budgets, CPU sampling, hooks, user space and the opt-in probes.
void setCostOptions(const RecordArgs& a, record::RecordOptions& o)
{
    auto& p = o.probe;
    p.stack_depth = a.stack_depth;
    p.stack_sample = a.stack_sample;
    p.stack_budget = a.stack_sample > 1 ? 0 : a.stack_budget;
    p.timing_budget = a.exact ? 0 : a.timing_budget;
    p.cpu_frequency_hz = a.no_cpu ? 0 : a.freq;
    p.wait = parseBackend("--wait-backend", a.wait_backend, probes::HookFamily::Wait);
    p.user_stacks = a.user_stacks;
    p.lock_owner = a.lock_owner;
    applyOptIn(a.optin, a.exact, p);
}

record::RecordOptions buildOptions(const RecordArgs& a, const std::vector<std::string>& argv)
{
    record::RecordOptions o;
    setTargets(a, argv, o);
    setSelection(a, o);
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
        ->check(within(1, kPidMaxLimit))
        ->allow_extra_args(false);
    cmd.add_flag("-a,--all", a.all, "record every process");
    cmd.add_option("-d,--duration", a.duration, "stop after SECONDS")->check(positive());
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

// The options that bound what recording costs; returns --exact.
CLI::Option* addCostOptions(CLI::App& cmd, RecordArgs& a)
{
    helpGroup(cmd, "Cost and precision");
    cmd.add_option("--stack-depth", a.stack_depth,
                   "frames kept after the lock internals; 0: no stacks (cheapest: a stack walk costs ~2 us "
                   "per contended wait, whatever the depth; locks of one type then share one key, <type>@unknown)")
        ->check(within(0u, 127u));
    auto* budget = cmd.add_option("--stack-budget", a.stack_budget,
                   "walk at most N stacks per second per CPU, for waits and for holds each (default 1000, ~0.2% "
                   "of a CPU); above that, an even sample is walked. Every wait and hold is still counted (and "
                   "timed, within --timing-budget), the rest under a '[stack not sampled]' path of their lock. "
                   "0: walk every stack")
        ->check(within(0u, 100000000u));
    cmd.add_option("--stack-sample", a.stack_sample,
                   "walk the stack of exactly 1 in N contended waits per CPU instead of a budget")
        ->check(within(1u, 1000000u))
        ->excludes(budget);
    auto* timingBudget = cmd.add_option("--timing-budget", a.timing_budget,
                   "time at most about N contended waits per second per CPU (default 20000); above "
                   "that, 1 in N waits on each lock is timed, every one is counted, and the untimed ones are "
                   "given the times of the timed ones. 0: time every wait (--holder-stacks does)")
        ->check(within(0u, 100000000u));
    auto* exact = cmd.add_flag("--exact", a.exact,
                   "time every contended wait and every IPC/timer syscall (--timing-budget 0 --syscalls "
                   "--syscall-budget 0): exact histograms, at a higher cost on busy workloads")
        ->excludes(timingBudget);
    cmd.add_flag("--no-cpu", a.no_cpu, "do not sample on-CPU stacks");
    cmd.add_option("--freq", a.freq,
                   "CPU sampling frequency in Hz per CPU (default " + std::to_string(a.freq) +
                       "; each sample is a timer interrupt, which a VM makes dear)")
        ->check(within(1u, 100000u));
    return exact;
}

void addMiscOptions(CLI::App& cmd, RecordArgs& a)
{
    helpGroup(cmd, "Hooks, stacks and the workload");
    cmd.add_option("--wait-backend", a.wait_backend, backendHelp("wait", probes::HookFamily::Wait));
    cmd.add_flag("--user-stacks", a.user_stacks,
                 "take the waiter's user stack too (walked by frame pointers: a binary built without them "
                 "shows its innermost frame only)");
    cmd.add_flag("--as-root", a.as_root,
                 "under sudo/pkexec, run the workload as root too (by default it runs as the invoking user)");
    cmd.add_option("--grace", a.grace,
                   "when stopping the workload (-d, Ctrl-C, SIGTERM), seconds between SIGTERM to its process "
                   "group and SIGKILL (default 5)")
        ->check(within(0.0, 3600.0));
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
    if (capture.cpu.bpf_samples.value_or(0))
        std::fprintf(stderr, "%s: %s\n", reports::fmt::kCpuBpfLabel,
                     reports::fmt::percent(capture.cpu.bpfShare(), 1).c_str());
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
    CLI::Option* exact = addCostOptions(*cmd, *args);
    const OptInOptions optin = addOptInOptions(*cmd, args->optin);
    exact->excludes(optin.syscall_budget)->excludes(optin.syscall_sample);
    addMiscOptions(*cmd, *args);
    cmd->callback([args, &result, optin]() {
        foldSyscallAskers(optin, args->optin);
        recordAndSummarize(*args, result);
    });
}

} // namespace lockscope::cli
