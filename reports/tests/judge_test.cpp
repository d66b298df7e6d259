// SPDX-License-Identifier: GPL-2.0-or-later
// The bisect judge on real run sets: the six A/A runs of the semop workload
// (fixtures/aa, one kernel, same command) and the seed-04 kernel pair
// (fixtures/seed04-4vcpu one run a side, fixtures/seed04-3v3 three). Bad-like sets are the same real runs with the judged
// lock's waits made longer, as a slower lock would make them. The figure is
// the scheduler lock's mean wait, the steadiest of these runs (CV 11% over
// six): with three runs a side, Welch's t at alpha 0.01 needs a side's CV
// well under 17% to call any change, however large.
#include <gtest/gtest.h>

#include "lockscope/capture/io.h"
#include "lockscope/reports/judge.h"
#include "test_support.h"

namespace lockscope::reports {
namespace {

const std::string kLock = "spinlock@__schedule";
const std::string kFigure = "mean_wait";

Capture aaRun(int i)
{
    return readCapture(test::testdata("fixtures/aa/aa" + std::to_string(i) + ".lockscope.json"));
}

std::vector<Capture> aaRuns(std::initializer_list<int> ids)
{
    std::vector<Capture> v;
    for (int i : ids)
        v.push_back(aaRun(i));
    return v;
}

// Every wait of the lock 2^shift times longer: its buckets move up by
// shift, its total, min and max are multiplied (the same in the CLI test).
Log2Hist slower(const Log2Hist& w, unsigned shift)
{
    if (w.empty())
        return w;
    std::array<uint64_t, Log2Hist::kBuckets> b{};
    for (unsigned i = 0; i + shift < Log2Hist::kBuckets; ++i)
        b[i + shift] = w.bucket(i);
    const uint64_t k = uint64_t{1} << shift;
    Log2Hist h = Log2Hist::fromParts(b, w.count(), w.total() * k, w.min() * k, w.max() * k);
    EXPECT_TRUE(h.consistent());
    return h;
}

Capture slower(Capture c, unsigned shift, const std::string& key = kLock)
{
    for (auto& l : c.locks)
        if (l.key == key) {
            l.wait = slower(l.wait, shift);
            for (auto& site : l.sites)
                site.wait = slower(site.wait, shift);
        }
    return c;
}

std::vector<Capture> slowerRuns(std::initializer_list<int> ids, unsigned shift)
{
    std::vector<Capture> v;
    for (int i : ids)
        v.push_back(slower(aaRun(i), shift));
    return v;
}

// Seed 04's pair recorded on 4 TCG vCPUs over 2 host cores: hash_lock has
// 53 contended waits there, enough for one run a side to be judged by the
// event test (on 2 vCPUs, as samples/captures has it now, a lone spinning
// waiter fires no tracepoint and two waits remain).
Capture seed04(const char* side)
{
    return readCapture(test::testdata(std::string("fixtures/seed04-4vcpu/") + side + ".lockscope.json"));
}

TEST(Judge, ParsesLockAndFigure)
{
    const JudgeTarget t = parseJudgeTarget("hash_lock:total_hold");
    EXPECT_EQ(t.lock, "hash_lock");
    EXPECT_EQ(t.figure, "total_hold");
    EXPECT_EQ(parseJudgeTarget("hash_lock").figure, "");
    EXPECT_THROW(parseJudgeTarget("hash_lock:speed"), std::invalid_argument);
    EXPECT_THROW(parseJudgeTarget(":total_wait"), std::invalid_argument);
}

// good: runs 1-3; bad: runs 1, 2, 5 with waits 4x longer.
std::vector<Capture> good() { return aaRuns({1, 2, 3}); }
// Runs 3-5: their untimed-wait share is within --max-loss-gap of good()'s (1, 2, 5 differ by 5.2 points,
// which withholds any wait verdict between them).
std::vector<Capture> bad() { return slowerRuns({3, 4, 5}, 2); }

TEST(Judge, GoodLikeRunsAreGood)
{
    const auto r = judge(good(), aaRuns({4, 5, 6}), bad(), {kLock, kFigure});
    EXPECT_EQ(r.call, Call::Good) << r.why;
    EXPECT_EQ(exitCode(r.call), 0);
    ASSERT_TRUE(r.endpoints);
    EXPECT_EQ(r.endpoints->change, Change::Up);
    EXPECT_EQ(r.vs_good.change, Change::Same) << r.vs_good.text();
    EXPECT_TRUE(r.matched_by_name.empty());
}

TEST(Judge, BadLikeRunsAreBad)
{
    // Other runs than the bad set's, made slower the same way.
    const auto r = judge(good(), slowerRuns({1, 3, 5}, 2), bad(), {kLock, kFigure});
    EXPECT_EQ(r.call, Call::Bad) << r.why;
    EXPECT_EQ(exitCode(r.call), 1);
    EXPECT_EQ(r.figure, kFigure);
}

TEST(Judge, NoisyRunsAreUndecided)
{
    // Two slow runs and one normal: the ranges overlap both sides'.
    std::vector<Capture> noisy = {slower(aaRun(4), 2), aaRun(5), slower(aaRun(6), 2)};
    const auto r = judge(good(), noisy, bad(), {kLock, kFigure});
    EXPECT_EQ(r.call, Call::Undecided) << r.why;
    EXPECT_EQ(exitCode(r.call), 125);
}

TEST(Judge, InBetweenRunsAreUndecided)
{
    // Waits twice as long, where bad has four times: unlike both.
    const auto r = judge(good(), slowerRuns({3, 4, 5}, 1), bad(), {kLock, kFigure});
    EXPECT_EQ(r.call, Call::Undecided) << r.why;
    EXPECT_NE(r.why.find("like neither"), std::string::npos) << r.why;
}

TEST(Judge, AlikeEndpointsDecideNothing)
{
    const auto r = judge(aaRuns({1, 2}), aaRuns({3, 4}), aaRuns({5, 6}), {kLock, kFigure});
    EXPECT_EQ(r.call, Call::Undecided);
    EXPECT_NE(r.why.find("good and bad are alike"), std::string::npos) << r.why;
}

TEST(Judge, WithoutBadRunsARiseIsBad)
{
    EXPECT_EQ(judge(good(), slowerRuns({1, 3, 5}, 2), {}, {kLock, kFigure}).call, Call::Bad);
    EXPECT_EQ(judge(good(), aaRuns({4, 5, 6}), {}, {kLock, kFigure}).call, Call::Good);
}

// The same runs with holds on the lock: about 1000 a run of ~1 us, times
// 2^shift.
std::vector<Capture> withHolds(std::vector<Capture> runs, unsigned shift)
{
    for (size_t i = 0; i < runs.size(); ++i)
        for (auto& l : runs[i].locks)
            if (l.key == kLock) {
                Log2Hist h;
                h.add((uint64_t{1000} + 37 * i) << shift, 1000 + 10 * i);
                l.hold = h;
            }
    return runs;
}

TEST(Judge, TheDefaultFigureIsTheOneTheCompareJudges)
{
    // The scheduler lock has waits: total wait/s.
    EXPECT_EQ(judge(good(), aaRuns({4, 5, 6}), bad(), {kLock, ""}).figure, "total_wait");
    // Its holds four times longer and its waits as they were: the compare
    // judges the lock on its total hold/s, and so does the judge.
    const auto holdsGood = withHolds(good(), 0), holdsBad = withHolds(aaRuns({3, 4, 5}), 2);
    const JudgeResult r = judge(holdsGood, withHolds(aaRuns({4, 5, 6}), 2), holdsBad, {kLock, ""});
    EXPECT_EQ(r.figure, "total_hold");
    EXPECT_EQ(r.call, Call::Bad) << r.why;
}

TEST(Judge, ALockWhoseKeyMovedIsMatchedByName)
{
    // The same lock, keyed by another caller in the candidate's build (inlining moved it).
    auto named = [](std::vector<Capture> v, const std::string& key) {
        for (auto& c : v)
            for (auto& l : c.locks)
                if (l.key == kLock) {
                    l.name = "rq.lock";
                    l.key = key;
                }
        return v;
    };
    const auto r = judge(named(good(), kLock), named(aaRuns({4, 5, 6}), "spinlock@sem_lock"), named(bad(), kLock),
                         {"rq.lock", kFigure});
    EXPECT_EQ(r.call, Call::Good) << r.why;
    EXPECT_EQ(r.lock, kLock);
    ASSERT_EQ(r.matched_by_name.size(), 1u);
    EXPECT_EQ(r.matched_by_name[0], "spinlock@sem_lock as " + kLock + " (by name rq.lock)");
}

TEST(Judge, ALockOnNoSideIsAnError)
{
    EXPECT_THROW(judge(aaRuns({1}), aaRuns({2}), aaRuns({3}), {"no_such_lock", ""}), std::invalid_argument);
}

std::vector<Capture> seed04Runs(const char* side)
{
    std::vector<Capture> v;
    for (int k = 1; k <= 3; ++k)
        v.push_back(readCapture(test::testdata("fixtures/seed04-3v3/" + std::string(side) + "-" + std::to_string(k) +
                                               ".lockscope.json")));
    return v;
}

TEST(Judge, TheSeedsLockIsJudgedOverRuns)
{
    // hash_lock: no waits in any baseline run, held once per call patched.
    const auto good = seed04Runs("base"), bad = seed04Runs("p4");
    const auto likeBad = judge(good, bad, bad, {"hash_lock", ""});
    EXPECT_EQ(likeBad.call, Call::Bad) << likeBad.why;
    EXPECT_EQ(likeBad.vs_good.change, Change::Up);
    const auto likeGood = judge(good, good, bad, {"hash_lock", ""});
    EXPECT_EQ(likeGood.call, Call::Good) << likeGood.why;
    EXPECT_EQ(likeGood.vs_bad->change, Change::Down);
}

TEST(Judge, OneRunAgainstThreeRunsIsJudged)
{
    // One run of the commit under test against three of each end: the ends' spread stands for its own.
    const auto good = aaRuns({1, 3, 5}), bad = slowerRuns({2, 4, 6}, 4);
    const auto likeBad = judge(good, {slower(aaRun(4), 4)}, bad, {kLock, kFigure});
    EXPECT_EQ(likeBad.call, Call::Bad) << likeBad.why;
    EXPECT_EQ(likeBad.vs_good.change, Change::Up);
    // The test has 2 df: against the slowed runs (their spread 16x the good runs') even a 16x difference
    // is not called, so a good-like single run stays undecided where three would be good.
    const auto likeGood = judge(good, {aaRun(6)}, bad, {kLock, kFigure});
    EXPECT_EQ(likeGood.call, Call::Undecided) << likeGood.why;
    EXPECT_EQ(likeGood.vs_good.change, Change::Same) << likeGood.vs_good.text();
    // Seed 04's hash_lock waits in one patched run and in no baseline run: one run cannot tell a lock that
    // comes and goes between runs from a new one (three runs can: TheSeedsLockIsJudgedOverRuns).
    const auto seed = judge(seed04Runs("base"), {seed04Runs("p4")[0]}, seed04Runs("p4"), {"hash_lock", ""});
    EXPECT_EQ(seed.call, Call::Undecided) << seed.why;
    EXPECT_NE(seed.why.find("in the one run only"), std::string::npos) << seed.why;
}

TEST(Judge, OneRunASideDecidesNothing)
{
    // The seed's new lock on one run a side (53 waits, patched only): a lock
    // one run sees and another misses is what runs of one kernel do too.
    const std::vector<Capture> good{seed04("base")}, bad{seed04("patched")};
    const auto r = judge(good, bad, bad, {"hash_lock", ""});
    EXPECT_EQ(r.call, Call::Undecided) << r.why;
    EXPECT_EQ(r.vs_good.change, Change::Unclear);
    EXPECT_NE(r.why.find("two or more runs a side"), std::string::npos) << r.why;
    EXPECT_FALSE(pickChangedLock(good, bad, ""));
}

TEST(Judge, PicksTheChangedLock)
{
    const auto pick = pickChangedLock(seed04Runs("base"), seed04Runs("p4"), "");
    ASSERT_TRUE(pick);
    EXPECT_EQ(pick->target.lock, "hash_lock") << pick->why;
    EXPECT_NE(pick->why.find("picked hash_lock"), std::string::npos) << pick->why;
    const auto slow = pickChangedLock(good(), bad(), kFigure);
    ASSERT_TRUE(slow);
    EXPECT_EQ(slow->target.lock, kLock) << slow->why;
}

// A bisect hunts what got worse: a lock that got better between good and
// bad, by more and more surely than another got worse, is passed over for
// the one that regressed (seed 04's __lock_timer improves while its
// hash_lock regresses). The improved lock is a second copy of __schedule's
// waits, the steadiest of these runs, 16x slower on the good side.
Capture withImprovable(Capture c, unsigned shift)
{
    for (const auto& l : c.locks)
        if (l.key == kLock) {
            Lock twin = l;
            twin.key = "spinlock@improved";
            c.locks.push_back(twin);
            break;
        }
    return slower(std::move(c), shift, "spinlock@improved");
}

TEST(Judge, PicksTheRegressionOverAnImprovement)
{
    std::vector<Capture> g, sameAsGood, b;
    for (auto& c : good()) {
        g.push_back(withImprovable(c, 4));
        sameAsGood.push_back(withImprovable(c, 0));
    }
    for (auto& c : bad())
        b.push_back(withImprovable(c, 0));
    const auto improvedAlone = pickChangedLock(g, sameAsGood, kFigure);
    ASSERT_TRUE(improvedAlone) << "the improvement alone is a change to bisect";
    EXPECT_EQ(improvedAlone->target.lock, "spinlock@improved") << improvedAlone->why;
    const auto pick = pickChangedLock(g, b, kFigure);
    ASSERT_TRUE(pick);
    EXPECT_EQ(pick->target.lock, kLock) << pick->why;
    EXPECT_EQ(pick->change.change, Change::Up) << pick->why;
}

TEST(Judge, AnAARunSetHasNoChangedLock)
{
    const auto pick = pickChangedLock(aaRuns({1, 2, 3}), aaRuns({4, 5, 6}), "");
    EXPECT_FALSE(pick) << pick->why;
}

} // namespace
} // namespace lockscope::reports
