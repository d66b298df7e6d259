// SPDX-License-Identifier: GPL-2.0-or-later
#include "lockscope/agent/agent.h"

#include "lockscope/capture/tail_basis.h"

#include <ctime>
#include <fstream>
#include <malloc.h>
#include <unistd.h>


namespace lockscope::agent {

namespace {

uint64_t residentBytes()
{
    std::ifstream in("/proc/self/statm");
    uint64_t size = 0, resident = 0;
    in >> size >> resident;
    return resident * uint64_t(sysconf(_SC_PAGESIZE));
}

// What the allocator has handed out and not had back, over every arena:
// the agent's live data. The resident set adds the allocator's free space,
// which grows in steps for minutes after start without a leak.
uint64_t heapInUseBytes()
{
    const struct mallinfo2 m = mallinfo2();
    return uint64_t(m.uordblks) + uint64_t(m.hblkhd);
}

double cpuSeconds()
{
    timespec ts{};
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return double(ts.tv_sec) + double(ts.tv_nsec) * 1e-9;
}

} // namespace

Agent::Agent(std::unique_ptr<record::LiveRecording> recording, AgentOptions options)
    : recording_(std::move(recording)), options_(options), cumulative_(SumLimits{.max_stacks = options.limits.max_stacks,
                                                                                .max_locks = options.limits.max_locks,
                                                                                .cpu_stacks = false,
                                                                                .fold_interrupted = true,
                                                                                .max_owners = options.limits.max_owners}),
      series_(options.metrics_top)
{
    health_.start_time_seconds = double(std::time(nullptr));
    health_.probes = recording_->probes();
}

Agent::~Agent() = default;

void Agent::readOutLocked()
{
    const auto start = std::chrono::steady_clock::now();
    const double cpuStart = cpuSeconds();
    {
        const Capture slice = recording_->readOut();
        health_.wait_attached_ratio = waitShare(slice.meta);
        cumulative_.add(slice);
        series_.add(slice);
        for (CaptureSum* d : deltas_)
            d->add(slice);
    }
    // A window's slice and a request's profile are freed in pieces that
    // glibc keeps for reuse at the top of each arena and in its bins; left
    // there, the RSS creeps up window after window. Hand them back.
    malloc_trim(0);
    ++health_.windows;
    health_.last_readout_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    health_.readout_seconds_total += health_.last_readout_seconds;
    health_.readout_cpu_seconds_total += cpuSeconds() - cpuStart;
}

void Agent::runWindows()
{
    const auto window = std::chrono::duration_cast<std::chrono::steady_clock::duration>(
        std::chrono::duration<double>(options_.window_s));
    std::unique_lock lock(mu_);
    auto next = std::chrono::steady_clock::now() + window;
    while (!stop_) {
        if (wake_.wait_until(lock, next, [this] { return stop_; }))
            break;
        readOutLocked();
        next += window;
        if (next < std::chrono::steady_clock::now()) // a read-out longer than a window: no burst after
            next = std::chrono::steady_clock::now() + window;
    }
}

void Agent::stop()
{
    {
        std::lock_guard lock(mu_);
        stop_ = true;
    }
    wake_.notify_all();
}

bool Agent::stopped() const
{
    std::lock_guard lock(mu_);
    return stop_;
}

AgentHealth Agent::healthLocked()
{
    AgentHealth h = health_;
    h.stack_ids_forgotten = recording_->stacksForgotten();
    h.stacks_not_kept = cumulative_.stacksNotKept();
    h.user_stacks_of_exited = recording_->userStacksOfExited();
    h.locks_forgotten = series_.locksForgotten();
    h.locks_folded = cumulative_.locksFolded();
    h.owners_folded = cumulative_.ownersFolded();
    h.resident_bytes = residentBytes();
    h.heap_in_use_bytes = heapInUseBytes();
    h.bpf_stats_enabled = probes::bpfStatsEnabled();
    if (h.bpf_stats_enabled)
        h.programs = recording_->programStats();
    return h;
}

std::string Agent::metrics()
{
    std::lock_guard lock(mu_);
    return renderMetrics(series_, cumulative_.totals(), healthLocked());
}

Capture Agent::cumulative()
{
    std::lock_guard lock(mu_);
    return cumulative_.capture();
}

std::optional<Capture> Agent::delta(std::chrono::milliseconds duration)
{
    CaptureSum sum(options_.limits);
    std::unique_lock lock(mu_);
    if (stop_)
        return std::nullopt;
    readOutLocked(); // what came before is not the request's
    deltas_.insert(&sum);
    const bool stopped = wake_.wait_for(lock, duration, [this] { return stop_; });
    if (!stopped)
        readOutLocked();
    deltas_.erase(&sum);
    if (stopped)
        return std::nullopt;
    return sum.capture();
}

void Agent::countRejected()
{
    std::lock_guard lock(mu_);
    ++health_.requests_rejected;
}

} // namespace lockscope::agent
