// SPDX-License-Identifier: GPL-2.0-or-later
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "lockscope/agent/lock_series.h"
#include "lockscope/capture/capture.h"
#include "lockscope/probes/probes.h"

// The Prometheus text exposition (format 0.0.4) of the agent's figures:
// the metric names, their units and help are all here (docs/agent.md lists
// them).
namespace lockscope::agent {

inline constexpr const char* kMetricsContentType = "text/plain; version=0.0.4; charset=utf-8";

// The agent's own health.
struct AgentHealth {
    uint64_t windows = 0;              // read-outs of the maps
    double readout_seconds_total = 0;  // wall time spent reading them out
    double readout_cpu_seconds_total = 0; // CPU time (user + system) spent reading them out
    double last_readout_seconds = 0;
    double wait_attached_ratio = 1;    // the last window's waitShare (Options::wait_rate_cap)
    uint64_t stack_ids_forgotten = 0;  // kernel stack ids deleted after going idle
    uint64_t stacks_not_kept = 0;      // sites filed under the full stack table
    uint64_t user_stacks_of_exited = 0;// user-lock events of processes gone before the read-out
    uint64_t locks_forgotten = 0;      // locks dropped from the metrics' ranking memory
    uint64_t locks_folded = 0;         // lock records folded into "[other locks]" of the cumulative profile
    uint64_t owners_folded = 0;        // lock owners folded into "[owners not kept]" of the cumulative profile
    uint64_t resident_bytes = 0;
    uint64_t heap_in_use_bytes = 0;    // allocated and not freed (mallinfo2): live data, not the allocator's slack
    double start_time_seconds = 0;     // Unix time
    bool bpf_stats_enabled = false;
    std::vector<probes::ProgramStats> programs;
    std::vector<ProbeStatus> probes;
    uint64_t requests_rejected = 0;    // profile requests refused with 503
};

// series: the per-lock counters; cumulative: everything since start (stats
// and CPU samples are read from it).
std::string renderMetrics(const LockSeries& series, const Capture& cumulative, const AgentHealth& health);

// The histogram's bucket bounds in seconds: 2^(i+1) ns for the log2
// buckets i in [kFirstBucket, kLastBucket], then +Inf.
inline constexpr unsigned kFirstBucket = 7;  // le 256 ns
inline constexpr unsigned kLastBucket = 35;  // le 68.7 s

} // namespace lockscope::agent
