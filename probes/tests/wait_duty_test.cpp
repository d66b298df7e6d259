// SPDX-License-Identifier: GPL-2.0-or-later
// The wait programs' part-time attachment (wait_duty.h): its controller, the
// scaling of what it sampled, and its switching order. The programs it
// switches are stood in for by functions here; the agent's end-to-end tests
// (agent.prometheus, agent.pprof) run it on the real ones against record.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <mutex>
#include <string>
#include <thread>

#include "wait_duty.h"

using lockscope::Log2Hist;
using lockscope::probes::LockRecord;
using lockscope::probes::OwnerRecord;
using namespace lockscope::probes::detail;

TEST(WaitDuty, SamplesOnlyAboveTheCapAndStopsWellBelowIt)
{
    EXPECT_EQ(nextWaitShare(1, 9000, 10000), 1);
    EXPECT_DOUBLE_EQ(nextWaitShare(1, 40000, 10000), 0.25);
    EXPECT_DOUBLE_EQ(nextWaitShare(0.25, 80000, 10000), 0.125);
    EXPECT_DOUBLE_EQ(nextWaitShare(0.25, 9000, 10000), 0.9); // below the cap, not yet 0.8 of it
    EXPECT_EQ(nextWaitShare(0.9, 7000, 10000), 1);
    EXPECT_DOUBLE_EQ(nextWaitShare(1, 1e9, 10000), 0.01); // at least 1% of each period
    EXPECT_EQ(nextWaitShare(0.5, 0, 10000), 1);            // nothing seen: attach again
    EXPECT_EQ(nextWaitShare(1, 1e9, 0), 1);                // no cap
}

TEST(WaitDuty, ScaledWaitsKeepTheirShapeAndMeanAndAreCountedUntimed)
{
    LockRecord r;
    r.hist.add(300, 30);
    r.hist.add(5000, 10);
    r.untimed = 4;
    std::vector<LockRecord> v { r };
    double carry = 0;
    scaleSampledWaits(v, 0.25, carry);
    const Log2Hist& h = v[0].hist;
    EXPECT_TRUE(h.consistent());
    EXPECT_EQ(h.count(), 160u);
    EXPECT_EQ(h.bucket(Log2Hist::bucketOf(300)), 120u);
    EXPECT_EQ(h.bucket(Log2Hist::bucketOf(5000)), 40u);
    EXPECT_EQ(h.mean(), r.hist.mean());
    EXPECT_EQ(h.min(), 300u);
    EXPECT_EQ(h.max(), 5000u);
    EXPECT_EQ(v[0].untimed, 4u + 120u);
}

// Many records of a wait each: rounding each alone would scale none of them.
TEST(WaitDuty, FractionsCarryAcrossRecordsSoTheSumIsScaled)
{
    std::vector<LockRecord> v(1000);
    for (LockRecord& r : v)
        r.hist.add(1000);
    double carry = 0;
    scaleSampledWaits(v, 0.3, carry);
    uint64_t n = 0;
    for (const LockRecord& r : v) {
        EXPECT_TRUE(r.hist.consistent());
        n += r.hist.count();
    }
    EXPECT_NEAR(double(n), 1000 / 0.3, 1.0);
}

// Owners of one wait each, as a window of many owner tasks has them: each
// rounded on its own would come out 1/0.3 -> 3 (10% short); carried, the sum
// is scaled and each owner's mean wait kept.
TEST(WaitDuty, OwnersCarryTheirFractionsAndKeepTheirMean)
{
    std::vector<OwnerRecord> v(1000);
    for (OwnerRecord& o : v) {
        o.count = 1;
        o.wait_ns = 5000;
    }
    double carry = 0;
    scaleSampledOwners(v, 0.3, carry);
    uint64_t n = 0;
    for (const OwnerRecord& o : v) {
        EXPECT_EQ(o.wait_ns, 5000 * o.count);
        n += o.count;
    }
    EXPECT_NEAR(double(n), 1000 / 0.3, 1.0);
}

// A window shorter than the horizon holds one attachment or none; its own
// share would be high exactly when it holds one's waits. It gets the share
// the periods are planned at.
TEST(WaitDuty, AShortWindowGetsThePlannedShareNotItsOwn)
{
    WaitDuty::Hooks h;
    h.begin = [](bool on) { return on; };
    h.end = [](bool on) { return on; };
    h.next_epoch = [] { };
    std::atomic<uint64_t> events { 0 };
    h.events = [&events] { return events += 100000; }; // 4x the cap each time it is read
    const std::chrono::milliseconds period { 400 };
    WaitDuty duty(std::move(h), 1e5, period);
    std::this_thread::sleep_for(period * 3);
    duty.takeShare();
    for (int i = 0; i < 8; ++i) {
        std::this_thread::sleep_for(period / 4);
        const double share = duty.takeShare();
        EXPECT_GT(share, 0.0099);
        EXPECT_LT(share, 0.9) << "window " << i << " took its own share";
    }
}

TEST(WaitDuty, NothingScaledWhenAttachedAllTheTime)
{
    LockRecord r;
    r.hist.add(700, 3);
    std::vector<LockRecord> v { r };
    double carry = 0;
    scaleSampledWaits(v, 1, carry);
    EXPECT_EQ(v[0].hist, r.hist);
    EXPECT_EQ(v[0].untimed, 0u);
}

// A load of 10^6 waits a second while attached, a cap of 10^5: after the
// first period of full attachment the begin program is attached a tenth of
// each period, the end program from before it until after it, and the share
// the drain reads says so.
TEST(WaitDuty, AttachesTheShareTheCapAllowsEndBeforeBeginAndAfterIt)
{
    using Clock = std::chrono::steady_clock;
    std::mutex mu;
    bool beginOn = true, endOn = true;
    double seenNs = 0;
    Clock::time_point since = Clock::now();
    std::string order;
    std::atomic<unsigned> epochs { 0 };
    auto account = [&] {
        const Clock::time_point now = Clock::now();
        if (beginOn)
            seenNs += std::chrono::duration<double, std::nano>(now - since).count();
        since = now;
    };
    WaitDuty::Hooks h;
    h.begin = [&](bool on) {
        std::lock_guard lock(mu);
        account();
        EXPECT_TRUE(endOn) << "contention_begin attached or detached while contention_end was not attached";
        beginOn = on;
        order += on ? 'B' : 'b';
        return on;
    };
    h.end = [&](bool on) {
        std::lock_guard lock(mu);
        EXPECT_FALSE(beginOn) << "contention_end switched while contention_begin was attached";
        endOn = on;
        order += on ? 'E' : 'e';
        return on;
    };
    h.next_epoch = [&] { ++epochs; };
    h.events = [&] {
        std::lock_guard lock(mu);
        account();
        return uint64_t(seenNs / 1000); // 10^6 a second while attached
    };
    const std::chrono::milliseconds period { 500 };
    WaitDuty duty(std::move(h), 1e5, period);
    std::this_thread::sleep_for(period + std::chrono::milliseconds(300));
    // A period attached, then a sampled one attached for its first tenth:
    // the window spans the change, so its own share.
    EXPECT_GT(duty.takeShare(), 0.6);
    std::this_thread::sleep_for(WaitDuty::kHorizonPeriods * period);
    const double share = duty.takeShare();
    duty.stop();
    EXPECT_GT(share, 0.08);
    EXPECT_LT(share, 0.2);
    EXPECT_GE(epochs.load(), 3u);
    std::lock_guard lock(mu);
    EXPECT_EQ(order.substr(0, 8), "beEBbeEB") << order;
}
