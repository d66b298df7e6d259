// SPDX-License-Identifier: GPL-2.0-or-later
#pragma once

#include <chrono>
#include <cstdio>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "lockscope/capture/capture.h"
#include "lockscope/record/recorder.h"

// `record -a` (or --cgroup) that never ends, for lockscope agent: the same
// probes and in-kernel aggregation, read out on demand into one capture per
// interval. Each read-out drains the maps (probes::Session::drain), so
// memory stays bounded however long it runs and no event is in two
// intervals.
namespace lockscope::record {

class LiveRecording {
public:
    // options.all is implied. Attaches the probes and prints their lines to
    // log. Throws RecordError (one line) when recording cannot start, or
    // when a probe asked for cannot be read out per interval.
    LiveRecording(RecordOptions options, std::FILE* log);
    ~LiveRecording();
    LiveRecording(const LiveRecording&) = delete;
    LiveRecording& operator=(const LiveRecording&) = delete;

    // What the probes aggregated since the previous read-out (or the
    // attach): a capture of that interval (meta.start_time and duration_s
    // say which). Not thread-safe: one caller at a time.
    Capture readOut();

    const std::vector<ProbeStatus>& probes() const { return probes_; }
    // Kernel stack ids deleted from the stack maps after not being seen for
    // a few read-outs (the maps would fill up otherwise).
    uint64_t stacksForgotten() const { return stacksForgotten_; }
    // User-lock events whose process was gone before the read-out, kept
    // without their user stack (see dropUnnamableUserStacks).
    uint64_t userStacksOfExited() const { return userStacksOfExited_; }
    // The loaded BPF programs' run statistics (probes::Session::programStats).
    std::vector<probes::ProgramStats> programStats() const;

private:
    void noteStacks(const probes::Snapshot& snap);
    void dropUnnamableUserStacks(probes::Snapshot& snap);
    void forgetIdleStacks();

    struct State;
    std::unique_ptr<State> state_;
    RecordOptions opt_;
    std::vector<ProbeStatus> probes_;
    Meta meta_;
    std::chrono::steady_clock::time_point last_;
    std::chrono::system_clock::time_point lastWall_;
    uint64_t readOuts_ = 0;
    std::map<int64_t, uint64_t> stackLastSeen_; // stack id -> read-out that last saw it
    uint64_t stacksForgotten_ = 0;
    uint64_t userStacksOfExited_ = 0;
};

} // namespace lockscope::record
