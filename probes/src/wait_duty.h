// SPDX-License-Identifier: GPL-2.0-or-later
#pragma once

// The wait programs attached only part of the time (Options::wait_rate_cap).
// At 5.7x10^5 contended waits a second (filepos) the tracepoints' dispatch
// to programs that do nothing already costs the load 6.5% (bench/record/
// README.md): no recorder attached all the time gets within the agent's 1%.
// Above the cap, contention_begin is attached for a share of each period
// (and contention_end a grace longer, so the waits begun then are seen to
// their end), the waits are a sample of time, and the drain scales them by
// the share.

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <span>
#include <thread>
#include <vector>

#include "lockscope/probes/probes.h"

namespace lockscope::probes::detail {

// The share of the next period to attach for, from the share of this one and
// the rate of waits (per second) seen while attached; cap: waits a second
// worth attaching for all the time. 1: attached all the time. Hysteresis:
// sampling goes on above the cap and off below 0.8 of it.
double nextWaitShare(double share, double rate, double cap);

// Scales each record's waits by 1/share: the extra ones take their record's
// distribution (and mean) and are counted untimed, since their times were
// estimated. carry keeps the fractions between records and drains, so no
// record's rounding biases the sum.
void scaleSampledWaits(std::span<LockRecord> waits, double share, double& carry);

// The same for the owners of those waits (Options::lock_owner): each
// owner's count scaled with the fractions carried, its mean wait kept.
void scaleSampledOwners(std::span<OwnerRecord> owners, double share, double& carry);

class WaitDuty {
public:
    struct Hooks {
        // Attach or detach contention_begin's (end's) program; false: it is not attached.
        std::function<bool(bool attach)> begin;
        std::function<bool(bool attach)> end;
        std::function<void()> next_epoch;       // before each attachment (wait.bpf.c attach_epoch)
        std::function<uint64_t()> events;       // waits filed so far
    };
    // Each switch costs ~3 ms of CPU (the tracepoints' static keys are
    // patched in and out): 4 a period.
    static constexpr std::chrono::milliseconds kPeriod { 2000 };
    // The ends of waits begun in an attachment are seen this much longer.
    static constexpr std::chrono::milliseconds kGrace { 20 };

    // Starts with both programs attached (the caller attached them).
    WaitDuty(Hooks hooks, double cap_per_second, std::chrono::milliseconds period = kPeriod);
    ~WaitDuty();
    WaitDuty(const WaitDuty&) = delete;
    WaitDuty& operator=(const WaitDuty&) = delete;

    // Stops switching; the programs stay as they are (the caller detaches).
    void stop();
    // The share of the time contention_begin was attached since the last
    // call; for a call sooner than kHorizonPeriods periods and after the
    // last change between sampling and attaching all the time, the share
    // the periods are planned at. A window of a period or less holds one
    // attachment or none, and its waits were filed up to a period late (the
    // ends' ring and the untimed counts wait for a later begin on their
    // CPU): its own share, or one measured over a span that is not a whole
    // number of periods, is high exactly when it holds an attachment's
    // waits, and underestimated them by 15-35%. 1 when attached all the time.
    double takeShare();
    static constexpr int kHorizonPeriods = 4;

private:
    using Clock = std::chrono::steady_clock;
    // Where contention_begin's attachment changed: the time attached before,
    // and whether it is attached from then on.
    struct Mark {
        Clock::time_point at;
        Clock::duration attached_before;
        bool on;
    };
    void run();
    bool runSampled(double& share, bool attached);
    bool sleepFor(Clock::duration d); // false once stopped
    void setBegin(bool on);
    void newRegime(double share); // from now on sampled (share < 1), or attached all the time
    Clock::duration attachedBy(Clock::time_point t) const; // mu_ held

    Hooks hooks_;
    double cap_;
    // Each switch costs ~3 ms of CPU (the tracepoints' static keys patched in and out).
    std::mutex mu_;
    std::condition_variable wake_;
    bool stop_ = false;
    std::chrono::milliseconds period_;
    std::chrono::milliseconds horizon_;
    std::vector<Mark> marks_; // oldest first, reaching back to the last takeShare
    Clock::time_point taken_;
    Clock::time_point regime_since_;
    double planned_ = 1; // the share the current period was planned at
    std::thread thread_;
};

} // namespace lockscope::probes::detail
