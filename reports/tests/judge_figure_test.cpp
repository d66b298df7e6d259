// SPDX-License-Identifier: GPL-2.0-or-later
#include <cmath>

#include <gtest/gtest.h>

#include "lockscope/reports/compare.h"

// judgeFigure, the one decision on a figure between run sets, on per-run
// values whose answer is known: presence in every run of one side, the
// absolute floors, the runs-to-decide estimate, settings and direction.
using namespace lockscope::reports;

namespace {
FigureRuns figure(const std::string& name, const std::string& unit, FigureKind kind, RunValues b, RunValues a,
    bool higherIsBetter = false)
{
    FigureRuns f;
    MetricDelta& m = f.figure;
    m.name = name;
    m.unit = unit;
    m.kind = kind;
    m.higher_is_better = higherIsBetter;
    m.before_runs = RunSummary::of(b.values);
    m.after_runs = RunSummary::of(a.values);
    m.value = Delta{m.before_runs.mean, m.after_runs.mean};
    f.before = std::move(b);
    f.after = std::move(a);
    if (m.before_runs.n >= 2 && m.after_runs.n >= 2)
        m.runs_test = welchTest(m.before_runs, m.after_runs);
    return f;
}

double tTail4(double t)
{
    const double u = 1.0 + t * t / 4.0;
    return 1.0 - 0.75 * std::fabs(t) / std::sqrt(u) * (1.0 - t * t / (12.0 * u));
}

const std::vector<double> kSeconds{1, 1, 1};
} // namespace

TEST(JudgeFigure, PresenceInEveryRunOfOneSideIsEvidence)
{
    // Seed 04's hash_lock waits: none in any baseline run, 12, 14, 9 in the patched runs.
    const FigureRuns waits = figure("contentions/s", "/s", FigureKind::EventsPerSecond,
        { { 0, 0, 0 }, { 0, 0, 0 }, kSeconds }, { { 12, 14, 9 }, { 12, 14, 9 }, kSeconds });
    const Judgement j = judgeFigure(waits, {});
    EXPECT_EQ(j.verdict, Verdict::Regressed);
    EXPECT_EQ(j.test, TestKind::QuasiPoissonRuns);
    ASSERT_TRUE(j.p_value);
    EXPECT_NEAR(*j.p_value, tTail4(17.5 / std::sqrt(8.75)), 1e-12);
    EXPECT_EQ(j.basis, "contentions/s");

    // Their wait time: 1.2, 1.5, 1.6 ms/s. Welch's t on these rests on one side's variance
    // alone; the figure is absent from every baseline run, so the rate test on its waits decides.
    const FigureRuns time = figure("total wait/s", "ns/s", FigureKind::TimePerSecond,
        { { 0, 0, 0 }, { 0, 0, 0 }, kSeconds }, { { 1.2e6, 1.5e6, 1.6e6 }, { 12, 14, 9 }, kSeconds });
    const Judgement t = judgeFigure(time, {});
    EXPECT_EQ(t.verdict, Verdict::Regressed);
    EXPECT_EQ(t.test, TestKind::QuasiPoissonRuns);
    EXPECT_NEAR(*t.p_value, *j.p_value, 1e-12);
    // The gone direction: less is better for a lock's time.
    const FigureRuns gone = figure("total wait/s", "ns/s", FigureKind::TimePerSecond,
        { { 1.2e6, 1.5e6, 1.6e6 }, { 12, 14, 9 }, kSeconds }, { { 0, 0, 0 }, { 0, 0, 0 }, kSeconds });
    EXPECT_EQ(judgeFigure(gone, {}).verdict, Verdict::Improved);
}

TEST(JudgeFigure, PresenceInSomeRunsOnlyIsNotEnough)
{
    // 0, 0, 0 against 0, 20, 15: the ranges touch, whatever the rate test says.
    const FigureRuns m = figure("contentions/s", "/s", FigureKind::EventsPerSecond,
        { { 0, 0, 0 }, { 0, 0, 0 }, kSeconds }, { { 0, 20, 15 }, { 0, 20, 15 }, kSeconds });
    EXPECT_EQ(judgeFigure(m, {}).verdict, Verdict::NoSignificantChange);
    // A handful of events: 0, 0, 0 against 1, 2, 1 is p 0.12 on 4 df.
    const FigureRuns few = figure("contentions/s", "/s", FigureKind::EventsPerSecond,
        { { 0, 0, 0 }, { 0, 0, 0 }, kSeconds }, { { 1, 2, 1 }, { 1, 2, 1 }, kSeconds });
    CompareOptions o;
    o.floor_events_per_s = 0.0;
    const Judgement j = judgeFigure(few, o);
    EXPECT_EQ(j.verdict, Verdict::NoSignificantChange);
    EXPECT_NEAR(*j.p_value, tTail4(2.0), 1e-12);
}

TEST(JudgeFigure, AbsoluteFloorKeepsATinyChangeOut)
{
    // The lab A/A's hash_lock: 24.7 -> 49.0 us/s of hold time, tight runs. Welch's p is tiny,
    // the ranges separate, the change is +98%: but 24 us/s is 0.0024% of one CPU.
    const FigureRuns m = figure("total hold/s", "ns/s", FigureKind::TimePerSecond,
        { { 24.5e3, 24.7e3, 24.8e3 }, { 32, 32, 32 }, kSeconds },
        { { 48.9e3, 49.0e3, 49.1e3 }, { 32, 32, 32 }, kSeconds });
    const Judgement j = judgeFigure(m, {});
    EXPECT_EQ(j.verdict, Verdict::NoSignificantChange);
    EXPECT_EQ(j.test, TestKind::WelchRuns);
    EXPECT_LT(*j.p_value, 0.001);
    EXPECT_TRUE(j.below_floor);
    EXPECT_FALSE(j.below_effect_floor);
    EXPECT_DOUBLE_EQ(figureFloor(m.figure, {}), 1e6) << "0.1% of one CPU is 1 ms of lock time per second";
    CompareOptions none;
    none.floor_cpu_pct = 0.0;
    EXPECT_EQ(judgeFigure(m, none).verdict, Verdict::Regressed) << "the floor is overridable";
    // The other floors in their units.
    CompareOptions o;
    EXPECT_DOUBLE_EQ(
        figureFloor(figure("holds/s", "/s", FigureKind::EventsPerSecond, {}, {}).figure, o), 10.0);
    EXPECT_DOUBLE_EQ(
        figureFloor(figure("hold time/op", "ns/op", FigureKind::TimePerOp, {}, {}).figure, o), 10.0);
    EXPECT_DOUBLE_EQ(
        figureFloor(figure("holds/op", "/op", FigureKind::EventsPerOp, {}, {}).figure, o), 0.001);
    EXPECT_DOUBLE_EQ(
        figureFloor(figure("waits/1k ops", "/1k ops", FigureKind::EventsPerOp, {}, {}).figure, o), 1.0);
    EXPECT_DOUBLE_EQ(figureFloor(figure("ops_per_sec", "", FigureKind::Other, {}, {}).figure, o), 0.0);
}

TEST(JudgeFigure, LargeUndecidedChangeSaysHowManyRunsWouldDecide)
{
    // ops/s -41% with CV 28% and 15% at n = 3 (mean 100 -> 59): Welch p ~0.1, so undecided;
    // at this variance 8 runs a side reach alpha 0.01 with 80% power (RunStats.RunsToDecideFollowsTheTTable).
    const FigureRuns m = figure("ops_per_sec", "", FigureKind::Other, { { 72, 100, 128 }, {}, {} },
        { { 59 - 8.85, 59, 59 + 8.85 }, {}, {} }, true);
    const Judgement j = judgeFigure(m, {});
    EXPECT_EQ(j.verdict, Verdict::NoSignificantChange);
    EXPECT_EQ(j.test, TestKind::WelchRuns);
    EXPECT_GT(*j.p_value, 0.01);
    EXPECT_EQ(j.runs_to_decide, 8u);
    // A small undecided change gets no estimate.
    const FigureRuns small = figure("ops_per_sec", "", FigureKind::Other, { { 72, 100, 128 }, {}, {} },
        { { 82, 110, 138 }, {}, {} }, true);
    EXPECT_EQ(judgeFigure(small, {}).runs_to_decide, 0u);
}

TEST(JudgeFigure, SettingsDirectionAndOneRun)
{
    const FigureRuns threads
        = figure("threads", "", FigureKind::Other, { { 4, 4, 4 }, {}, {} }, { { 8, 8, 8 }, {}, {} });
    const Judgement s = judgeFigure(threads, {});
    EXPECT_EQ(s.verdict, Verdict::NoVerdict);
    EXPECT_NE(s.reason.str().find("setting"), std::string::npos);

    FigureRuns holds = figure("holds/s", "/s", FigureKind::EventsPerSecond,
        { { 1000, 1010, 990 }, { 1000, 1010, 990 }, kSeconds },
        { { 3000, 3030, 2970 }, { 3000, 3030, 2970 }, kSeconds });
    holds.figure.directed = false;
    const Judgement h = judgeFigure(holds, {});
    EXPECT_EQ(h.verdict, Verdict::NoVerdict);
    EXPECT_EQ(h.test, TestKind::QuasiPoissonRuns);
    EXPECT_NE(h.reason.str().find("no better/worse direction"), std::string::npos);
    holds.figure.directed = true;
    EXPECT_EQ(judgeFigure(holds, {}).verdict, Verdict::Regressed);

    const FigureRuns one = figure("total wait/s", "ns/s", FigureKind::TimePerSecond,
        { { 5e6 }, { 10 }, { 1 } }, { { 9e6, 9e6 }, { 10, 10 }, { 1, 1 } });
    const Judgement o = judgeFigure(one, {});
    EXPECT_EQ(o.verdict, Verdict::NoVerdict);
    EXPECT_EQ(o.test, TestKind::None);
    EXPECT_NE(o.reason.str().find("one run"), std::string::npos);
}

TEST(JudgeFigure, EffectFloorStillApplies)
{
    const FigureRuns m = figure("total wait/s", "ns/s", FigureKind::TimePerSecond,
        { { 100.0e6, 100.1e6, 99.9e6 }, { 1e5, 1e5, 1e5 }, kSeconds },
        { { 103.0e6, 103.1e6, 102.9e6 }, { 1e5, 1e5, 1e5 }, kSeconds });
    const Judgement j = judgeFigure(m, {});
    EXPECT_EQ(j.verdict, Verdict::NoSignificantChange);
    EXPECT_TRUE(j.below_effect_floor);
    EXPECT_EQ(j.runs_to_decide, 0u);
}
