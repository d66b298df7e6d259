// SPDX-License-Identifier: GPL-2.0-or-later
// runRecord: its steps live in record_start.cpp, recording_loop.cpp and
// record_finish.cpp (record_steps.h lists them).
#include "lockscope/record/recorder.h"

#include <algorithm>
#include <cinttypes>
#include <sstream>

#include "lockscope/capture/units.h"
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
    std::unique_ptr<probes::Session> session = attachProbes(opt, popt, capture, workload != nullptr, log);

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

std::string topLocksTable(const Capture& capture, size_t rows)
{
    std::vector<const Lock*> locks;
    for (const auto& l : capture.locks)
        if (!l.wait.empty())
            locks.push_back(&l);
    std::stable_sort(locks.begin(), locks.end(),
                     [](const Lock* a, const Lock* b) { return a->wait.total() > b->wait.total(); });
    if (locks.size() > rows)
        locks.resize(rows);
    size_t keyW = 4;
    for (const Lock* l : locks)
        keyW = std::max(keyW, std::min<size_t>(l->key.size(), 48));
    std::ostringstream out;
    char buf[256];
    std::snprintf(buf, sizeof buf, "%-*s  %-12s %10s %11s %10s %10s\n", int(keyW), "lock", "type",
                  "contended", "total wait", "max", "avg");
    out << buf;
    for (const Lock* l : locks) {
        std::string key = l->key.size() > keyW ? l->key.substr(0, keyW - 3) + "..." : l->key;
        std::snprintf(buf, sizeof buf, "%-*s  %-12s %10" PRIu64 " %11s %10s %10s\n", int(keyW),
                      key.c_str(), l->type.c_str(), l->wait.count(), units::duration(double(l->wait.total())).c_str(),
                      units::duration(double(l->wait.max())).c_str(), units::duration(double(l->wait.mean())).c_str());
        out << buf;
    }
    if (locks.empty())
        out << "(no contended locks seen)\n";
    return out.str();
}

} // namespace lockscope::record
