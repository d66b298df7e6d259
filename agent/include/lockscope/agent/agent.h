// SPDX-License-Identifier: GPL-2.0-or-later
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>

#include "lockscope/agent/capture_sum.h"
#include "lockscope/agent/lock_series.h"
#include "lockscope/agent/metrics.h"
#include "lockscope/record/live_recording.h"

// The agent's figures: the recording read out every window into
// cumulative figures since start, and into the delta of every profile
// request running. Thread-safe: the window loop and the HTTP handlers
// share one Agent.
namespace lockscope::agent {

struct AgentOptions {
    double window_s = 10;
    size_t metrics_top = 50;
    SumLimits limits;
};

class Agent {
public:
    Agent(std::unique_ptr<record::LiveRecording> recording, AgentOptions options);
    ~Agent();

    // Reads out every window until stop(); returns at once after it.
    void runWindows();
    // Wakes runWindows and every waiting delta(); they return promptly.
    void stop();
    bool stopped() const;

    // The probes as they attached; fixed once the agent runs.
    const std::vector<ProbeStatus>& probes() const { return recording_->probes(); }

    std::string metrics();
    Capture cumulative();
    // Blocks for `seconds`, then returns what was recorded meanwhile (read
    // out at its start and end, so exactly that interval). nullopt when the
    // agent stopped first.
    std::optional<Capture> delta(std::chrono::milliseconds seconds);

    // Health counters the HTTP side adds to.
    void countRejected();

private:
    // One read-out: the maps drained into a capture of the interval since
    // the last, added to the cumulative figures and every open delta.
    void readOutLocked();
    AgentHealth healthLocked();

    std::unique_ptr<record::LiveRecording> recording_;
    AgentOptions options_;
    mutable std::mutex mu_; // everything below, and the recording
    std::condition_variable wake_;
    bool stop_ = false;
    CaptureSum cumulative_;
    LockSeries series_;
    AgentHealth health_;
    std::set<CaptureSum*> deltas_;
};

} // namespace lockscope::agent
