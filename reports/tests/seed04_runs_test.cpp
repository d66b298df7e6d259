// SPDX-License-Identifier: GPL-2.0-or-later
#include <gtest/gtest.h>

#include "lockscope/capture/io.h"
#include "lockscope/reports/compare.h"
#include "lockscope/reports/render.h"
#include "test_support.h"

// Seed 04's pair, 3 runs a side: Debian's 6.1 source unpatched (base) and
// with samples/kernel-patches/04-posix-timer-lookup.patch (p4), recorded by
//   lockscope lab --kernel base=debian-src:6.1
//     --kernel p4=debian-src:6.1+samples/kernel-patches/04-posix-timer-lookup.patch --runs 3
//     --accel tcg-multi --cpus 2 --record-args --no-cpu -- timer-stress --procs 2 --timers 8 --duration 2
// and stripped with
//   samples/captures/strip_capture.py <lab-dir>/<side>/run-K.lockscope.json <side>-K.lockscope.json
//     --locks 8 --sites 2 --keep hash_lock --keep spinlock@__lock_timer
// The patched kernel takes the global hash_lock once per timer_gettime() in
// every run (15k-29k holds, 55-92 waits); the baseline holds it 32 times a
// run and never waits for it. Throughput fell by about 70% on this loaded
// host, so each lock is judged per operation.
using namespace lockscope;
using namespace lockscope::reports;

namespace {
std::vector<Capture> side(const std::string& name)
{
    std::vector<Capture> v;
    for (int k = 1; k <= 3; ++k)
        v.push_back(readCapture(test::testdata("fixtures/seed04-3v3/" + name + "-" + std::to_string(k) +
                                               ".lockscope.json")));
    return v;
}

const Comparison& seed04()
{
    static const Comparison c = compareSets(side("base"), side("p4"));
    return c;
}

const MetricDelta& figure(const LockDelta& l, const std::string& name)
{
    const MetricDelta* m = lockFigure(l, name);
    if (!m)
        throw std::runtime_error(l.key + " has no figure " + name);
    return *m;
}
} // namespace

TEST(Seed04Runs, HashLockIsCalledWithTheFigureAndTestItRestsOn)
{
    const Comparison& c = seed04();
    ASSERT_TRUE(c.varianceKnown());
    const LockDelta& l = test::findLock(c, "hash_lock");
    EXPECT_EQ(l.judgement.verdict, Verdict::Regressed) << render(c, Format::Text);
    EXPECT_NE(l.judgement.test, TestKind::None);
    EXPECT_TRUE(l.judgement.basis == "hold time/op" || l.judgement.basis == "wait time/op") << l.judgement.basis;
    // About one hold per operation after, almost none before.
    EXPECT_NEAR(figure(l, "holds/op").value.after, 1.0, 0.05);
    EXPECT_LT(figure(l, "holds/op").value.before, 0.001);
    // Its waits are absent from every baseline run: the rate test over runs decides them.
    const MetricDelta& waits = figure(l, "wait time/op");
    EXPECT_EQ(waits.before_runs.max, 0.0);
    EXPECT_EQ(waits.judgement.test, TestKind::QuasiPoissonRuns);
    EXPECT_EQ(waits.judgement.verdict, Verdict::Regressed);
    EXPECT_EQ(figure(l, "hold time/op").judgement.verdict, Verdict::Regressed);
}

TEST(Seed04Runs, ThroughputFellSoPerOperationLeads)
{
    const Comparison& c = seed04();
    EXPECT_TRUE(c.per_op);
    EXPECT_TRUE(c.per_op_leads);
    EXPECT_LT(*c.ops_per_s.pct(), -50.0);
    EXPECT_NE(varianceNote(c).find("judged per operation"), std::string::npos);
    const LockDelta& timer = test::findLock(c, "spinlock@__lock_timer");
    EXPECT_EQ(timer.judgement.basis, "hold time/op");
    // Per second its hold time fell; per operation it rose.
    EXPECT_LT(*figure(timer, "total hold/s").value.pct(), 0.0);
    EXPECT_GT(*figure(timer, "hold time/op").value.pct(), 0.0);
}

TEST(Seed04Runs, UndecidedThroughputSaysHowManyRunsWouldDecideIt)
{
    const Comparison& c = seed04();
    const MetricDelta* ops = nullptr;
    for (const auto& m : c.workload)
        if (m.name == "ops_per_sec")
            ops = &m;
    ASSERT_TRUE(ops);
    EXPECT_EQ(ops->judgement.verdict, Verdict::NoSignificantChange);
    EXPECT_GT(ops->judgement.runs_to_decide, 3u);
    EXPECT_NE(render(c, Format::Markdown).find("runs a side would decide this"), std::string::npos);
}

TEST(Seed04Runs, GoldenInEveryFormat)
{
    for (Format f : {Format::Text, Format::Markdown, Format::Html, Format::Json}) {
        const std::string err = test::checkGolden(std::string("seed04_3v3.") + toString(f), render(seed04(), f));
        EXPECT_TRUE(err.empty()) << err;
    }
}
