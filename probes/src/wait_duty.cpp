// SPDX-License-Identifier: GPL-2.0-or-later
#include "wait_duty.h"

#include <algorithm>
#include <cmath>

namespace lockscope::probes::detail {

namespace {

// Below 1% of the time, a period's attachment (20 ms) sees too few waits of
// a lock to rank it; above 90% the grace and the switching leave no saving.
constexpr double kMinShare = 0.01;
constexpr double kMaxShare = 0.9;
constexpr double kLeaveSampling = 1.25; // cap / rate at which sampling stops
constexpr std::ptrdiff_t kMaxMarks = 4096;   // a window of over an hour: its oldest part is left out

// The unseen ones n seen stand for, whole, the fraction carried on.
uint64_t unseen(uint64_t n, double extra, double& carry)
{
    const double want = double(n) * extra + carry;
    const auto more = static_cast<uint64_t>(want);
    carry = want - double(more);
    return more;
}

double perSecond(uint64_t events, std::chrono::steady_clock::duration d)
{
    const double s = std::chrono::duration<double>(d).count();
    return s > 0 ? double(events) / s : 0;
}

// The first mark after t.
template <class Marks, class Time> auto markAfter(Marks& marks, Time t)
{
    return std::upper_bound(marks.begin(), marks.end(), t, [](Time x, const auto& k) { return x < k.at; });
}

std::chrono::steady_clock::duration onFor(std::chrono::milliseconds period, double share)
{
    return std::chrono::duration_cast<std::chrono::steady_clock::duration>(period * share);
}

} // namespace

double nextWaitShare(double share, double rate, double cap)
{
    if (cap <= 0 || rate <= 0)
        return 1;
    const double want = cap / rate;
    if (share >= 1)
        return want < 1 ? std::clamp(want, kMinShare, kMaxShare) : 1;
    if (want >= kLeaveSampling)
        return 1;
    return std::clamp(want, kMinShare, kMaxShare);
}

void scaleSampledWaits(std::span<LockRecord> waits, double share, double& carry)
{
    if (!(share > 0) || share >= 1)
        return;
    const double extra = 1 / share - 1; // unseen waits per seen one
    for (LockRecord& r : waits) {
        const Log2Hist& h = r.hist;
        if (h.empty())
            continue;
        std::array<uint64_t, Log2Hist::kBuckets> b = h.buckets();
        uint64_t added = 0;
        for (uint64_t& n : b) {
            if (!n)
                continue;
            const uint64_t more = unseen(n, extra, carry);
            n += more;
            added += more;
        }
        if (!added)
            continue;
        const uint64_t count = h.count() + added;
        // The mean kept: the unseen waits are like the seen ones.
        using Wide = long double;
        const auto total = static_cast<uint64_t>(std::clamp(Wide(h.total()) * Wide(count) / Wide(h.count()),
            Wide(h.min()) * Wide(count), Wide(h.max()) * Wide(count)));
        r.hist = Log2Hist::fromParts(b, count, total, h.min(), h.max());
        r.untimed += added;
    }
}

void scaleSampledOwners(std::span<OwnerRecord> owners, double share, double& carry)
{
    if (!(share > 0) || share >= 1)
        return;
    const double extra = 1 / share - 1;
    for (OwnerRecord& o : owners) {
        if (!o.count)
            continue;
        const uint64_t more = unseen(o.count, extra, carry);
        o.wait_ns = static_cast<uint64_t>(
            static_cast<long double>(o.wait_ns) * static_cast<long double>(o.count + more) / o.count);
        o.count += more;
    }
}

WaitDuty::WaitDuty(Hooks hooks, double cap_per_second, std::chrono::milliseconds period)
    : hooks_(std::move(hooks))
    , cap_(cap_per_second)
    , period_(period)
    , horizon_(kHorizonPeriods * period)
    , marks_ { Mark { Clock::now(), {}, true } }
    , taken_(marks_.front().at)
    , regime_since_(taken_)
{
    thread_ = std::thread([this] { run(); });
}

WaitDuty::~WaitDuty() { stop(); }

void WaitDuty::stop()
{
    {
        std::lock_guard lock(mu_);
        stop_ = true;
    }
    wake_.notify_all();
    if (thread_.joinable())
        thread_.join();
}

WaitDuty::Clock::duration WaitDuty::attachedBy(Clock::time_point t) const
{
    auto m = markAfter(marks_, t);
    if (m == marks_.begin())
        return {};
    --m;
    return m->attached_before + (m->on ? t - m->at : Clock::duration::zero());
}

double WaitDuty::takeShare()
{
    std::lock_guard lock(mu_);
    const Clock::time_point now = Clock::now();
    const Clock::time_point from = std::max(taken_, marks_.front().at);
    const bool shortWindow = taken_ > regime_since_ && now - taken_ < horizon_;
    taken_ = now;
    if (shortWindow)
        return planned_;
    if (now <= from)
        return 1;
    return std::clamp(std::chrono::duration<double>(attachedBy(now) - attachedBy(from)) / (now - from), 0.0, 1.0);
}

bool WaitDuty::sleepFor(Clock::duration d)
{
    std::unique_lock lock(mu_);
    return !wake_.wait_for(lock, d, [this] { return stop_; });
}

void WaitDuty::newRegime(double share)
{
    std::lock_guard lock(mu_);
    regime_since_ = Clock::now();
    planned_ = share;
}

void WaitDuty::setBegin(bool on)
{
    on = hooks_.begin(on);
    std::lock_guard lock(mu_);
    const Clock::time_point now = Clock::now();
    if (on == marks_.back().on)
        return;
    marks_.push_back(Mark { now, attachedBy(now), on });
    // Those the next takeShare reads: from the last one at or before the
    // last call on (two a period: a 10-s window holds ten).
    auto keep = markAfter(marks_, taken_);
    if (keep != marks_.begin())
        --keep;
    keep = std::max(keep, marks_.end() - std::min<std::ptrdiff_t>(kMaxMarks, std::ssize(marks_)));
    marks_.erase(marks_.begin(), keep);
}

void WaitDuty::run()
{
    double share = 1;
    bool attached = true;
    for (;;) {
        if (share < 1) {
            if (!runSampled(share, attached))
                return;
            attached = share >= 1;
            continue;
        }
        const uint64_t seen = hooks_.events();
        const Clock::time_point t0 = Clock::now();
        if (!sleepFor(period_))
            return;
        share = nextWaitShare(1, perSecond(hooks_.events() - seen, Clock::now() - t0), cap_);
        if (share < 1)
            newRegime(share); // its first period goes on from the attachment there is
    }
}

// One period: attached for share of it, then the grace for the ends, then
// detached. False once stopped: the programs stay as they are then (the
// caller detaches them).
bool WaitDuty::runSampled(double& share, bool attached)
{
    if (!attached) {
        hooks_.next_epoch();
        hooks_.end(true);
        setBegin(true);
    }
    {
        std::lock_guard lock(mu_);
        planned_ = share;
    }
    const uint64_t seen = hooks_.events();
    const Clock::time_point t0 = Clock::now();
    const Clock::duration on = onFor(period_, share);
    if (!sleepFor(on))
        return false;
    setBegin(false);
    const double rate = perSecond(hooks_.events() - seen, Clock::now() - t0);
    if (!sleepFor(kGrace))
        return false;
    share = nextWaitShare(share, rate, cap_);
    if (share >= 1) {
        newRegime(1);
        hooks_.next_epoch();
        setBegin(true); // the end program is still attached
        return true;
    }
    hooks_.end(false);
    return sleepFor(period_ - on - kGrace);
}

} // namespace lockscope::probes::detail
