// SPDX-License-Identifier: GPL-2.0-or-later
#pragma once

#include <cstdio>
#include <poll.h>
#include <set>
#include <vector>

#include "record_steps.h"

namespace lockscope::record::detail {

// Move-only: a copied descriptor would be closed twice.
struct ScopedFd {
    int fd = -1;
    explicit ScopedFd(int f) : fd(f) {}
    ScopedFd(ScopedFd&& o) noexcept : fd(o.fd) { o.fd = -1; }
    ScopedFd& operator=(ScopedFd&&) = delete;
    ScopedFd(const ScopedFd&) = delete;
    ~ScopedFd();
};

// The live status line on a terminal, cleared before other output.
class StatusLine {
public:
    StatusLine(std::FILE* out, bool enabled) : out_(out), enabled_(enabled) {}
    void show(const char* text);
    void clear();

private:
    std::FILE* out_;
    bool enabled_;
    bool shown_ = false;
};

// Records until a stop condition: the workload exited (and its output was
// drained), a -p process exited, -d ran out, a stop signal, or stdin closed.
// -d, a stop signal or stdin closing send the workload's group SIGTERM and
// the recording goes on until it exited; a second signal, or the grace period
// running out, sends SIGKILL. Meanwhile it copies the workload's output,
// prepares user symbols while their processes live, and shows a status line.
class RecordingLoop {
public:
    RecordingLoop(const RecordOptions& opt, const probes::Options& popt, probes::Session& session,
                  WorkloadProcess* workload, UserSymbols& userSymbols, int signalFd, std::FILE* log);
    // start: when the probes began recording (elapsed time and -d count from it).
    LoopEnd run(Clock::time_point start);

private:
    // The descriptors one poll() waits on, and where each kind sits.
    struct PollSet {
        std::vector<pollfd> fds;
        int stdin_at = -1, output_at = -1;
        size_t targets_at = 0;
        short revents(int at) const { return at < 0 ? short(0) : fds[size_t(at)].revents; }
    };
    PollSet pollSet() const;
    void requestStop(bool insist);
    void readSignals();
    void readStdin();
    void followWorkload();
    void watchTargets(const PollSet& ps);
    void prepareWorkloadSymbols(double elapsed);
    void showStatus(double elapsed);
    void symbolizeSeenProcesses(const probes::Snapshot& snap);

    const RecordOptions& opt_;
    probes::Session& session_;
    WorkloadProcess* workload_;
    UserSymbols& userSymbols_;
    int signalFd_;
    std::vector<ScopedFd> targetFds_;
    StatusLine status_;
    Clock::duration grace_;

    bool stop_ = false, stopping_ = false, draining_ = false, watchStdin_;
    Clock::time_point killAt_{}, drainUntil_{};
    // User stacks (--user-stacks, and every user-lock event) are symbolized
    // from /proc/PID/maps, which is gone once a process exits: read it while
    // the process lives, for the workload and for every process seen with one.
    bool wantUserSymbols_;
    bool workloadSymbolsPrepared_ = false;
    std::set<uint32_t> symbolizedTgids_, cachedTgids_; // cachedTgids_: see retireExited
    double lastTick_ = 0, lastSnap_ = -10;
    uint64_t lastEvents_ = 0, locksSeen_ = 0, drops_ = 0;
};

} // namespace lockscope::record::detail
