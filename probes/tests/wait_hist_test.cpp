// SPDX-License-Identifier: GPL-2.0-or-later
// How untimed waits (timing budget) and ring leftovers join the wait
// histograms before they become records: pure userspace, no BPF.
#include <gtest/gtest.h>

#include "lockscope/capture/histogram.h"
#include "lockscope_bpf.h"
#include "wait_hist.h"

namespace {

using lockscope::Log2Hist;
using lockscope::probes::HolderRecord;
using lockscope::probes::LockRecord;
using lockscope::probes::detail::RawWait;

constexpr uint64_t A = 0xffff888000001000ULL;
constexpr uint64_t B = 0xffff888000002000ULL;

RawWait raw(uint64_t lock, int32_t kstack, std::initializer_list<uint64_t> timed, uint64_t untimed)
{
    RawWait w;
    w.record.lock_addr = lock;
    w.record.kstack_id = kstack;
    w.record.flags = LS_LCB_F_SPIN;
    w.hist.min = ~0ULL;
    for (uint64_t ns : timed) {
        w.hist.slots[Log2Hist::bucketOf(ns)] += 1;
        w.hist.total += ns;
        w.hist.min = std::min<uint64_t>(w.hist.min, ns);
        w.hist.max = std::max<uint64_t>(w.hist.max, ns);
    }
    w.hist.count = timed.size() + untimed;
    return w;
}

TEST(WaitHist, UntimedWaitsTakeTheTimesOfTheirKeysTimedOnes)
{
    std::vector<RawWait> in { raw(A, LS_STACK_UNSAMPLED, { 100, 100, 1000 }, 9) };
    std::vector<LockRecord> out;
    const auto u = lockscope::probes::detail::finishWaits(in, out);
    ASSERT_EQ(out.size(), 1u);
    const Log2Hist& h = out[0].hist;
    EXPECT_EQ(u.spread, 9u);
    EXPECT_EQ(u.unplaced, 0u);
    EXPECT_EQ(h.count(), 12u);
    EXPECT_EQ(h.bucket(Log2Hist::bucketOf(100)), 8u) << "2 of 3 timed, so 2/3 of the 9";
    EXPECT_EQ(h.bucket(Log2Hist::bucketOf(1000)), 4u);
    EXPECT_EQ(h.total(), 1200u * 4) << "the timed total scaled by 12 / 3";
    EXPECT_EQ(h.min(), 100u);
    EXPECT_EQ(h.max(), 1000u);
}

TEST(WaitHist, UntimedWaitsOfAKeyWithoutTimedOnesTakeTheirLocksTimes)
{
    // Every timed wait of A was walked (its own stack), the untimed ones sit
    // under the unsampled stack; B's times must not leak into A.
    std::vector<RawWait> in { raw(A, 7, { 200, 200 }, 0), raw(A, LS_STACK_UNSAMPLED, {}, 4),
        raw(B, 8, { 50000 }, 0) };
    std::vector<LockRecord> out;
    const auto u = lockscope::probes::detail::finishWaits(in, out);
    ASSERT_EQ(out.size(), 3u);
    EXPECT_EQ(u.spread, 4u);
    const Log2Hist& unsampled = out[1].hist;
    EXPECT_EQ(out[1].kstack_id, LS_STACK_UNSAMPLED);
    EXPECT_EQ(unsampled.count(), 4u);
    EXPECT_EQ(unsampled.bucket(Log2Hist::bucketOf(200)), 4u);
    EXPECT_EQ(unsampled.total(), 800u);
    EXPECT_EQ(unsampled.max(), 200u);
    EXPECT_EQ(out[0].hist.count(), 2u) << "timed keys are left as they are";
}

TEST(WaitHist, UntimedWaitsOfAKeyWithoutTimedOnesTakeTheTimesOfTheirLocksSameKind)
{
    // A mutex's timed waits: spins of ~300 ns (mutex:spin) and sleeps of
    // ~1 ms (mutex). Its untimed sleeps take the sleeps' times, not the mix.
    RawWait spins = raw(A, 7, { 300, 300, 300, 300, 300, 300 }, 0);
    spins.record.flags = LS_LCB_F_MUTEX | LS_LCB_F_SPIN;
    RawWait sleeps = raw(A, 8, { 1'000'000, 1'000'000 }, 0);
    sleeps.record.flags = LS_LCB_F_MUTEX;
    RawWait untimed = raw(A, LS_STACK_UNSAMPLED, {}, 5);
    untimed.record.flags = LS_LCB_F_MUTEX;
    std::vector<RawWait> in { spins, sleeps, untimed };
    std::vector<LockRecord> out;
    const auto u = lockscope::probes::detail::finishWaits(in, out);
    EXPECT_EQ(u.spread, 5u);
    ASSERT_EQ(out.size(), 3u);
    const Log2Hist& h = out[2].hist;
    EXPECT_EQ(out[2].kstack_id, LS_STACK_UNSAMPLED);
    EXPECT_EQ(h.count(), 5u);
    EXPECT_EQ(h.bucket(Log2Hist::bucketOf(1'000'000)), 5u) << "sleeps take the times of sleeps";
    EXPECT_EQ(h.total(), 5'000'000u);
}

TEST(WaitHist, UntimedWaitsWithNoTimedWaitOnTheirLockAreLeftOutAndCounted)
{
    std::vector<RawWait> in { raw(A, LS_STACK_UNSAMPLED, {}, 5), raw(B, 8, { 300 }, 0) };
    std::vector<LockRecord> out;
    const auto u = lockscope::probes::detail::finishWaits(in, out);
    EXPECT_EQ(u.unplaced, 5u);
    EXPECT_EQ(u.spread, 0u);
    ASSERT_EQ(out.size(), 1u);
    EXPECT_EQ(out[0].lock_addr, B);
}

TEST(WaitHist, ADrainedWindowWithoutTimedWaitsOnALockTakesItsLastTimedShape)
{
    lockscope::probes::detail::LastShapes last;
    std::vector<RawWait> first { raw(A, 7, { 200, 200, 3000 }, 0) };
    std::vector<LockRecord> out;
    lockscope::probes::detail::finishWaits(first, out, &last);
    // The countdown's untimed waits of A come in the next window.
    std::vector<RawWait> second { raw(A, LS_STACK_UNSAMPLED, {}, 6), raw(B, 8, { 300 }, 0) };
    out.clear();
    const auto u = lockscope::probes::detail::finishWaits(second, out, &last);
    EXPECT_EQ(u.spread, 6u);
    EXPECT_EQ(u.unplaced, 0u);
    ASSERT_EQ(out.size(), 2u);
    const Log2Hist& h = out[0].lock_addr == A ? out[0].hist : out[1].hist;
    EXPECT_EQ(h.count(), 6u);
    EXPECT_EQ(h.bucket(Log2Hist::bucketOf(200)), 4u) << "2 of 3 timed were 200 ns";
    EXPECT_EQ(h.min(), 200u);
    EXPECT_EQ(h.max(), 3000u);
    // A window of its own kind only: B's shape is not A's.
    std::vector<RawWait> third { raw(B, 8, {}, 2), raw(0xdead000ULL, 9, {}, 3) };
    out.clear();
    const auto v = lockscope::probes::detail::finishWaits(third, out, &last);
    EXPECT_EQ(v.spread, 2u);
    EXPECT_EQ(v.unplaced, 3u) << "a lock never timed has no shape";
}

TEST(WaitHist, LastShapesKeepsTheMostRecentlyUsedKeys)
{
    using lockscope::probes::detail::LastShapes;
    LastShapes last;
    ls_hist like {};
    like.slots[3] = 1;
    const uint64_t n = LastShapes::kMax + 100;
    for (uint64_t k = 0; k < n; ++k)
        last.remember({ k, 0 }, like);
    last.endWindow();
    EXPECT_EQ(last.size(), n) << "one window's keys are kept whole";
    // The next window uses key 0 again and brings kMax - 1 new keys.
    ASSERT_NE(last.find({ 0, 0 }), nullptr);
    for (uint64_t k = n; k < n + LastShapes::kMax - 1; ++k)
        last.remember({ k, 0 }, like);
    last.endWindow();
    EXPECT_EQ(last.size(), LastShapes::kMax);
    EXPECT_NE(last.find({ 0, 0 }), nullptr) << "used in the last window";
    EXPECT_EQ(last.find({ 1, 0 }), nullptr) << "not used since the window before";
}

TEST(WaitHist, SpreadingKeepsTheCountExactWhateverTheRounding)
{
    // 3 timed waits in 3 buckets, 10 untimed: 3.33 each, one bucket gets 4.
    std::vector<RawWait> in { raw(A, LS_STACK_UNSAMPLED, { 10, 1000, 100000 }, 10) };
    std::vector<LockRecord> out;
    lockscope::probes::detail::finishWaits(in, out);
    ASSERT_EQ(out.size(), 1u);
    EXPECT_EQ(out[0].hist.count(), 13u);
    uint64_t sum = 0;
    for (uint64_t b : out[0].hist.buckets())
        sum += b;
    EXPECT_EQ(sum, 13u);
}

// The weighted samples (LS_WAIT_F_WEIGHTED): each unwalked timed wait once
// per untimed wait it stands for. A quiet stretch timed every one of its
// short waits (weight 0), a busy one 1 in 6 of its 4-us waits (weight 5):
// the untimed waits, all from the busy stretch, take 4 us, where the timed
// waits' plain distribution would give them mostly 100 ns.
RawWait weighted(uint64_t lock, uint32_t tgid, std::initializer_list<std::pair<uint64_t, uint64_t>> nsTimesWeight)
{
    RawWait w;
    w.record.lock_addr = lock;
    w.record.kstack_id = LS_STACK_UNSAMPLED;
    w.record.flags = LS_LCB_F_SPIN | LS_WAIT_F_WEIGHTED;
    w.record.tgid = tgid;
    w.hist.min = ~0ULL;
    for (const auto& [ns, weight] : nsTimesWeight) {
        w.hist.slots[Log2Hist::bucketOf(ns)] += weight;
        w.hist.total += ns * weight;
        w.hist.count += weight;
        w.hist.min = std::min<uint64_t>(w.hist.min, ns);
        w.hist.max = std::max<uint64_t>(w.hist.max, ns);
    }
    return w;
}

TEST(WaitHist, UntimedWaitsTakeTheTimedOnesWeightedByTheWaitsEachStandsFor)
{
    std::vector<RawWait> in { raw(A, 7, { 100, 100, 100, 100, 100, 100, 100, 100, 4000, 4000 }, 0),
        raw(A, LS_STACK_UNSAMPLED, {}, 10), weighted(A, 0, { { 4000, 5 }, { 4000, 5 } }) };
    std::vector<LockRecord> out;
    const auto u = lockscope::probes::detail::finishWaits(in, out);
    EXPECT_EQ(u.spread, 10u);
    ASSERT_EQ(out.size(), 2u) << "the weighted samples are no record of their own";
    const LockRecord& untimed = out[1];
    EXPECT_EQ(untimed.kstack_id, LS_STACK_UNSAMPLED);
    EXPECT_EQ(untimed.untimed, 10u);
    EXPECT_EQ(untimed.hist.count(), 10u);
    EXPECT_EQ(untimed.hist.bucket(Log2Hist::bucketOf(4000)), 10u);
    EXPECT_EQ(untimed.hist.total(), 40000u);
    EXPECT_EQ(untimed.hist.min(), 4000u);
    EXPECT_EQ(untimed.hist.max(), 4000u);
}

// A key's own weighted samples first; else those of its lock and flags
// (another process's waits on the lock were timed), never another lock's.
TEST(WaitHist, WeightedSamplesOfTheSameLockAndFlagsServeAKeyWithoutItsOwn)
{
    RawWait other = raw(A, LS_STACK_UNSAMPLED, {}, 4);
    other.record.tgid = 42;
    std::vector<RawWait> in { raw(A, LS_STACK_UNSAMPLED, {}, 3), other, weighted(A, 0, { { 2000, 6 } }),
        weighted(B, 0, { { 900000, 6 } }), raw(B, 8, { 100 }, 0) };
    std::vector<LockRecord> out;
    const auto u = lockscope::probes::detail::finishWaits(in, out);
    EXPECT_EQ(u.spread, 7u);
    EXPECT_EQ(u.unplaced, 0u);
    for (const LockRecord& r : out) {
        if (r.lock_addr != A)
            continue;
        EXPECT_EQ(r.hist.max(), 2000u) << "tgid " << r.tgid;
        EXPECT_EQ(r.hist.total(), 2000u * r.hist.count()) << "tgid " << r.tgid;
    }
}

// Ring leftovers (timed) and untimed waits still in the per-CPU count caches.
TEST(WaitHist, RingLeftoversAndPendingCountsJoinTheirKey)
{
    std::vector<RawWait> in { raw(A, LS_STACK_UNSAMPLED, { 400 }, 0) };
    std::vector<HolderRecord> holders;
    ls_wait_done timed {};
    timed.lock = A;
    timed.kstack = LS_STACK_UNSAMPLED;
    timed.ustack = -1;
    timed.flags = LS_LCB_F_SPIN;
    timed.delta = 400;
    ls_wait_done other = timed;
    other.lock = B;
    EXPECT_EQ(lockscope::probes::detail::addUndrained({ timed, other }, in, holders), 2u);
    ls_wait_count untimed {};
    untimed.key.lock = A;
    untimed.key.kstack = LS_STACK_UNSAMPLED;
    untimed.key.ustack = -1;
    untimed.key.flags = LS_LCB_F_SPIN;
    untimed.count = 1;
    const auto pending = lockscope::probes::detail::addPendingCounts({ untimed }, in);
    EXPECT_EQ(pending.waits, 1u);
    EXPECT_EQ(pending.unsampled, 1u);
    ASSERT_EQ(in.size(), 2u) << "B's leftover starts a key of its own; A's count joins A's";
    EXPECT_EQ(in[0].hist.count, 3u);
    std::vector<LockRecord> out;
    const auto u = lockscope::probes::detail::finishWaits(in, out);
    EXPECT_EQ(u.spread, 1u);
    ASSERT_EQ(out.size(), 2u);
    EXPECT_EQ(out[0].hist.count(), 3u);
    EXPECT_EQ(out[0].hist.total(), 1200u);
    EXPECT_EQ(out[1].hist.count(), 1u);
    EXPECT_EQ(out[1].hist.min(), 400u);
}

} // namespace
