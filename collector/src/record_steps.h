// SPDX-License-Identifier: GPL-2.0-or-later
#pragma once

// The steps of runRecord (recorder.cpp), in the order it takes them: check
// the targets, start the workload held before exec, attach the probes,
// record until a stop condition (recording_loop.h), stop the workload, and
// assemble the capture from the maps.

#include <chrono>
#include <cstdio>
#include <memory>

#include "lockscope/capture/capture.h"
#include "lockscope/probes/probes.h"
#include "lockscope/record/kallsyms.h"
#include "lockscope/record/recorder.h"
#include "lockscope/record/user_symbols.h"
#include "lockscope/record/workload.h"

namespace lockscope::record::detail {

using Clock = std::chrono::steady_clock;

double secondsSince(Clock::time_point t);

// Throws RecordError when there is nothing to record, no BPF privilege, a -p
// process that does not exist or a command that cannot be run.
void checkTargets(const RecordOptions& opt);
KernelSymbols loadKernelSymbols(const std::string& kallsyms);

// The command's process, forked and held before exec (nullptr without one).
// When user stacks are recorded, its symbols are read as it exits, so that a
// workload gone before the recording loop first looked still has them.
std::unique_ptr<WorkloadProcess> spawnWorkload(const RecordOptions& opt, UserSymbols& userSymbols);

// opt.probe with the targets' tgids and the CPU leaf functions.
probes::Options probeOptions(const RecordOptions& opt, const WorkloadProcess* workload,
                             const KernelSymbols& symbols);

// Opens the session, keeps its status in capture.probes (an off-by-default
// probe's reason says how to ask for it) and prints one line per probe and
// the "N probes attached" line to log.
std::unique_ptr<probes::Session> attachProbes(const probes::Options& popt, Capture& capture,
                                              bool withWorkload, std::FILE* log);

// How the recording loop ended, for stopping the workload.
struct LoopEnd {
    bool stopping = false;         // the workload was told to stop (SIGTERM sent)
    Clock::time_point kill_at{};   // when its group gets SIGKILL
};

// Reaps the workload (killing it if it still runs), gives what is left of its
// group the rest of the grace period, and keeps its exit and results.
void endWorkload(WorkloadProcess& workload, const LoopEnd& end, Clock::duration grace, Capture& capture,
                 std::FILE* log);

// Turns the session's maps into capture's locks, stacks and histograms.
void assembleCapture(const RecordOptions& opt, const probes::Options& popt, const probes::Session& session,
                     const KernelSymbols& symbols, UserSymbols& userSymbols, uint32_t defaultTgid,
                     Capture& capture);

// The same for a snapshot already read (a drain: lockscope agent).
void assembleSnapshot(const probes::Snapshot& snap, const RecordOptions& opt, const probes::Options& popt,
                      const probes::Session& session, const KernelSymbols& symbols, UserSymbols& userSymbols,
                      uint32_t defaultTgid, Capture& capture);

// One line per counter that says something was lost or approximated.
void reportCounters(const Stats& st, std::FILE* log);

} // namespace lockscope::record::detail
