// SPDX-License-Identifier: GPL-2.0-or-later
// runRecord's last steps: stop what is left of the workload, turn the maps
// into the capture, and say what was lost or approximated.
#include <algorithm>
#include <cinttypes>
#include <csignal>
#include <unistd.h>

#include "lockscope/record/cgroup_paths.h"
#include "record_steps.h"

namespace lockscope::record::detail {
namespace {

// The workload was told to stop: what is left of its group gets the rest of
// the grace period, then SIGKILL, so nothing of it outlives the recording.
void finishGroup(const WorkloadProcess& workload, Clock::time_point killAt, Clock::duration grace)
{
    const auto until = std::min(killAt, Clock::now() + grace);
    while (workload.groupAlive() && Clock::now() < until)
        ::usleep(20000);
    if (workload.groupAlive())
        workload.killGroup(SIGKILL);
}

} // namespace

void endWorkload(WorkloadProcess& workload, const LoopEnd& end, Clock::duration grace, Capture& capture,
                 std::FILE* log)
{
    if (!workload.exited()) {
        workload.killGroup(SIGKILL);
        workload.wait();
    }
    if (end.stopping)
        finishGroup(workload, end.kill_at, grace);
    else if (workload.groupAlive())
        std::fprintf(log, "note: the workload exited but left processes running (process group %d); "
                     "their output is no longer shown\n", int(workload.pid()));
    capture.workload.exit_status = workload.exitStatus();
    capture.workload.signal = workload.termSignal();
    capture.workload.results = workload.scanner().results();
    for (const auto& w : workload.scanner().warnings())
        std::fprintf(log, "warning: %s\n", w.c_str());
}

void assembleCapture(const RecordOptions& opt, const probes::Options& popt, const probes::Session& session,
                     const KernelSymbols& symbols, UserSymbols& userSymbols, uint32_t defaultTgid,
                     Capture& capture)
{
    assembleSnapshot(session.snapshot(), opt, popt, session, symbols, userSymbols, defaultTgid, capture);
}

void assembleSnapshot(const probes::Snapshot& snap, const RecordOptions& opt, const probes::Options& popt,
                      const probes::Session& session, const KernelSymbols& symbols, UserSymbols& userSymbols,
                      uint32_t defaultTgid, Capture& capture)
{
    AssembleOptions aopt = opt.assemble;
    // A sampling probe that could not attach sampled nothing: say so with 0 Hz.
    bool sampled = std::any_of(capture.probes.begin(), capture.probes.end(), [](const ProbeStatus& p) {
        return p.attached && p.hook == "perf_event";
    });
    aopt.cpu_frequency_hz = sampled ? popt.cpu_frequency_hz : 0;
    aopt.stack_depth = popt.stack_depth;
    aopt.per_tgid = popt.per_tgid;
    aopt.per_cgroup = popt.per_cgroup;
    if (popt.per_cgroup)
        aopt.cgroup_path = [paths = std::make_shared<CgroupPaths>(cgroup2Mount())](uint64_t id) {
            return paths->pathOf(id);
        };
    for (const auto& u : popt.user_locks)
        aopt.user_lock_functions.insert(u.lock_fn);
    aopt.own_code = session.programCode();
    const probes::Session* s = &session;
    CaptureAssembler assembler(
        symbols, [s](int64_t id) { return s->kernelStack(id); },
        [s, &userSymbols, defaultTgid](int64_t id, uint32_t tgid) {
            uint32_t pid = tgid ? tgid : defaultTgid;
            std::vector<Frame> frames;
            for (uint64_t ip : s->userStack(id, pid))
                frames.push_back(userSymbols.resolve(pid_t(pid), ip));
            return frames;
        },
        aopt);
    assembler.assemble(snap, capture);
}

void reportCounters(const Stats& st, std::FILE* log)
{
    struct CounterLine {
        uint64_t Stats::*count;
        const char* before; // the line is before + count + after
        const char* after;
    };
    static constexpr CounterLine kLines[] = {
        {&Stats::lost, "warning: ", " events lost"},
        {&Stats::map_full, "warning: ", " updates dropped: a BPF map was full"},
        {&Stats::map_busy, "warning: ", " updates dropped: a BPF map's bucket was busy on that CPU (not full)"},
        {&Stats::stack_failures, "warning: ", " stacks could not be taken"},
        {&Stats::stacks_nested, "note: ",
         " of those walks began while another ran on their CPU (most often the walk's own map lock, "
         "an event left out)"},
        {&Stats::stack_collisions, "note: ",
         " of those stacks found their bucket in the stack map, and in the spill map, held by other stacks"},
        {&Stats::recursion_misses, "warning: ", " probe runs skipped by the kernel (re-entry)"},
        {&Stats::own_lock_events, "note: ", " lock events inside lockscope's own BPF programs left out"},
        {&Stats::stacks_unsampled, "note: ",
         " contended waits and spin-lock holds were counted without a stack walk "
         "(stack budget or --stack-sample; --stack-budget 0 walks every one)"},
        {&Stats::waits_untimed, "note: ",
         " contended waits were counted, not timed: their times follow "
         "the timed waits of their lock (timing budget; --timing-budget 0 times every one)"},
        {&Stats::syscalls_untimed, "note: ",
         " syscalls were counted, not timed: their latencies follow the timed "
         "calls of the same syscall (--syscall-budget; --exact times every one)"},
        {&Stats::cpu_unstacked, "note: ",
         " CPU samples were counted by their function alone: their kernel stack "
         "could not be kept (a stack map full, or its bucket taken); the CPU shares include them"},
        {&Stats::owner_stacks_unsampled, "note: ",
         " lock owners were named without their stack: the wait's own stack "
         "was not walked either (stack budget; --stack-budget 0 walks every one)"},
        {&Stats::holder_not_found, "note: ",
         " contended spinlock waits found no holder on another CPU (holder stacks are approximate)"},
        {&Stats::stale_holds, "note: ",
         " spin-lock acquisitions whose release was missed (re-entry) were dropped when their lock was taken again"},
        {&Stats::impossible_holds, "warning: ", " spin-lock holds released before they were acquired were dropped"},
    };
    for (const CounterLine& line : kLines)
        if (const uint64_t n = st.*line.count)
            std::fprintf(log, "%s%" PRIu64 "%s\n", line.before, n, line.after);
}

} // namespace lockscope::record::detail
