// SPDX-License-Identifier: GPL-2.0-or-later
// runRecord: its steps live in record_start.cpp, recording_loop.cpp and
// record_finish.cpp (record_steps.h lists them).
#include "lockscope/record/recorder.h"

#include "lockscope/record/system_info.h"
#include "record_steps.h"
#include "recording_loop.h"
#include "stop_signals.h"

namespace lockscope::record {

Capture runRecord(const RecordOptions& opt, std::FILE* log)
{
    using namespace detail;
    checkTargets(opt);
    const KernelSymbols symbols = loadKernelSymbols(opt.kallsyms);

    Capture capture;
    fillSystemMeta(capture.meta);
    capture.meta.label = opt.label;
    capture.meta.command = opt.command_line;
    capture.meta.filters = recordFilters(opt);
    capture.workload.command = opt.command;

    StopSignals signals; // before the fork: no SIGCHLD of the workload is missed
    UserSymbols userSymbols;
    std::unique_ptr<WorkloadProcess> workload = spawnWorkload(opt, userSymbols);
    probes::Options popt = probeOptions(opt, workload.get(), symbols);
    std::unique_ptr<probes::Session> session = attachProbes(popt, capture, workload != nullptr, log);

    const auto start = Clock::now();
    capture.meta.start_time = rfc3339(std::chrono::system_clock::now());
    if (workload) {
        try {
            workload->release();
        } catch (const WorkloadError& e) {
            throw RecordError(e.what());
        }
    }
    RecordingLoop loop(opt, popt, *session, workload.get(), userSymbols, signals.fd(), log);
    const LoopEnd end = loop.run(start);
    session->detach();
    capture.meta.duration_s = secondsSince(start);
    if (workload)
        endWorkload(*workload, end, std::chrono::milliseconds(int64_t(opt.kill_grace_s * 1000)), capture, log);

    const uint32_t defaultTgid =
        workload ? uint32_t(workload->pid()) : (opt.pids.empty() ? 0 : uint32_t(opt.pids[0]));
    assembleCapture(opt, popt, *session, symbols, userSymbols, defaultTgid, capture);
    reportCounters(capture.stats, log);
    return capture;
}

} // namespace lockscope::record
