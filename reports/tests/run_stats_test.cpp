// SPDX-License-Identifier: GPL-2.0-or-later
#include <cmath>

#include <gtest/gtest.h>

#include "lockscope/reports/run_stats.h"

using namespace lockscope::reports;

TEST(RunStats, IncompleteBetaKnownValues)
{
    EXPECT_NEAR(incompleteBeta(1.0, 1.0, 0.3), 0.3, 1e-12);          // uniform
    EXPECT_NEAR(incompleteBeta(3.0, 1.0, 0.5), 0.125, 1e-12);        // x^a
    EXPECT_NEAR(incompleteBeta(1.0, 4.0, 0.2), 1.0 - std::pow(0.8, 4), 1e-12);
    EXPECT_NEAR(incompleteBeta(7.5, 7.5, 0.5), 0.5, 1e-12);          // symmetry
    EXPECT_NEAR(incompleteBeta(2.0, 3.0, 0.4), 0.5248, 1e-4);        // 1 - sum binomial(4, 0.4) k<2
    EXPECT_DOUBLE_EQ(incompleteBeta(2.0, 3.0, 0.0), 0.0);
    EXPECT_DOUBLE_EQ(incompleteBeta(2.0, 3.0, 1.0), 1.0);
}

TEST(RunStats, StudentTMatchesTable)
{
    // Two-sided critical values from the t table (alpha = 0.05 and 0.01).
    EXPECT_NEAR(studentTTwoSided(12.706, 1), 0.05, 1e-4);
    EXPECT_NEAR(studentTTwoSided(4.303, 2), 0.05, 1e-4);
    EXPECT_NEAR(studentTTwoSided(2.776, 4), 0.05, 1e-4);
    EXPECT_NEAR(studentTTwoSided(4.032, 5), 0.01, 1e-4);
    EXPECT_NEAR(studentTTwoSided(2.228, 10), 0.05, 1e-4);
    EXPECT_NEAR(studentTTwoSided(3.169, 10), 0.01, 1e-4);
    EXPECT_NEAR(studentTTwoSided(2.042, 30), 0.05, 1e-4);
    EXPECT_NEAR(studentTTwoSided(1.96, 1e7), 0.05, 1e-4);           // the normal limit
    EXPECT_NEAR(studentTTwoSided(-2.228, 10), 0.05, 1e-4);          // symmetric
    EXPECT_DOUBLE_EQ(studentTTwoSided(0.0, 5), 1.0);
    EXPECT_NEAR(studentTTwoSided(1.0, 1), 0.5, 1e-12);               // Cauchy: P(|T|>1) = 1/2
    EXPECT_DOUBLE_EQ(studentTTwoSided(INFINITY, 3), 0.0);
}

TEST(RunStats, SummaryIsSampleMeanAndStddev)
{
    const RunSummary s = RunSummary::of({2, 4, 4, 4, 5, 5, 7, 9});
    EXPECT_EQ(s.n, 8u);
    EXPECT_DOUBLE_EQ(s.mean, 5.0);
    EXPECT_NEAR(s.stddev, std::sqrt(32.0 / 7.0), 1e-12);
    EXPECT_NEAR(s.coeffVarPct(), std::sqrt(32.0 / 7.0) / 5.0 * 100.0, 1e-9);
    EXPECT_DOUBLE_EQ(s.min, 2.0);
    EXPECT_DOUBLE_EQ(s.max, 9.0);
    EXPECT_DOUBLE_EQ(RunSummary::of({3}).stddev, 0.0);
    EXPECT_EQ(RunSummary::of({}).n, 0u);
}

TEST(RunStats, WelchMatchesWorkedExample)
{
    // Welch's own kind of example (Wikipedia, "Welch's t-test", example 1): t = -2.46, df = 25.0, p = 0.021.
    const RunSummary a1 = RunSummary::of({27.5, 21.0, 19.0, 23.6, 17.0, 17.9, 16.9, 20.1, 21.9, 22.6, 23.1, 19.6,
                                          19.0, 21.7, 21.4});
    const RunSummary a2 = RunSummary::of({27.1, 22.0, 20.8, 23.4, 23.4, 23.5, 25.8, 22.0, 24.8, 20.2, 21.9, 22.1,
                                          22.9, 20.5, 24.4});
    const RunTest r = welchTest(a2, a1);  // t is after minus before
    EXPECT_NEAR(r.t, -2.455, 0.001);
    EXPECT_NEAR(r.df, 24.99, 0.01);
    EXPECT_NEAR(r.p_value, 0.021, 0.001);
    EXPECT_FALSE(r.ranges_separate);
}

TEST(RunStats, RangesAndDegenerateVariance)
{
    const RunTest sep = welchTest(RunSummary::of({10, 11, 12}), RunSummary::of({20, 21, 22}));
    EXPECT_TRUE(sep.ranges_separate);
    EXPECT_LT(sep.p_value, 0.001);
    EXPECT_GT(sep.t, 0.0);
    const RunTest same = welchTest(RunSummary::of({5, 5}), RunSummary::of({5, 5}));
    EXPECT_DOUBLE_EQ(same.p_value, 1.0);
    EXPECT_FALSE(same.ranges_separate);
    const RunTest fixed = welchTest(RunSummary::of({5, 5}), RunSummary::of({6, 6}));
    EXPECT_DOUBLE_EQ(fixed.p_value, 0.0);
    EXPECT_TRUE(fixed.ranges_separate);
}

namespace {
// Student's t two-sided tail in closed form for 2 and 4 degrees of freedom,
// independent of the incomplete beta the library uses.
double tTail2(double t)
{
    return 1.0 - std::fabs(t) / std::sqrt(t * t + 2.0);
}
double tTail4(double t)
{
    const double u = 1.0 + t * t / 4.0;
    return 1.0 - 0.75 * std::fabs(t) / std::sqrt(u) * (1.0 - t * t / (12.0 * u));
}
} // namespace

TEST(RunStats, ClosedFormTailsAgreeWithTheTable)
{
    EXPECT_NEAR(tTail4(2.776), 0.05, 1e-4);
    EXPECT_NEAR(tTail2(4.303), 0.05, 1e-4);
    EXPECT_NEAR(studentTTwoSided(5.0, 4), tTail4(5.0), 1e-12);
    EXPECT_NEAR(studentTTwoSided(3.0, 2), tTail2(3.0), 1e-12);
}

TEST(RunStats, OneRunAgainstTheOtherSidesPredictionInterval)
{
    // 10, 12, 14: mean 12, s 2; a run at 20 lies (20 - 12) / (2 sqrt(1 + 1/3)) = 3.464 standard errors out, on 2 df.
    const RunSummary three = RunSummary::of({10, 12, 14}), one = RunSummary::of({20});
    const RunTest up = singleRunTest(three, one);
    EXPECT_NEAR(up.t, 8.0 / (2.0 * std::sqrt(4.0 / 3.0)), 1e-12);
    EXPECT_DOUBLE_EQ(up.df, 2.0);
    EXPECT_NEAR(up.p_value, tTail2(up.t), 1e-12);
    EXPECT_TRUE(up.ranges_separate);
    // The single run on the before side: the same size, the other sign.
    const RunTest down = singleRunTest(one, three);
    EXPECT_NEAR(down.t, -up.t, 1e-12);
    EXPECT_NEAR(down.p_value, up.p_value, 1e-12);
    // Inside the other side's range: not separate, p large.
    const RunTest inside = singleRunTest(three, RunSummary::of({13}));
    EXPECT_FALSE(inside.ranges_separate);
    EXPECT_GT(inside.p_value, 0.5);
    // runsTest picks it for one run, Welch's t for two or more a side.
    EXPECT_EQ(runsTest(three, one), up);
    EXPECT_EQ(runsTest(three, RunSummary::of({19, 21})), welchTest(three, RunSummary::of({19, 21})));
    // No spread on the other side: p 1 for the same value, 0 for another.
    EXPECT_DOUBLE_EQ(singleRunTest(RunSummary::of({5, 5, 5}), RunSummary::of({5})).p_value, 1.0);
    EXPECT_DOUBLE_EQ(singleRunTest(RunSummary::of({5, 5, 5}), RunSummary::of({6})).p_value, 0.0);
}

TEST(RunStats, RunsDecideWithTwoASideOrThreeAgainstOne)
{
    EXPECT_FALSE(runsCanDecide(1, 1));
    EXPECT_FALSE(runsCanDecide(1, 2));
    EXPECT_FALSE(runsCanDecide(2, 1));
    EXPECT_FALSE(runsCanDecide(0, 5));
    EXPECT_TRUE(runsCanDecide(1, 3));
    EXPECT_TRUE(runsCanDecide(3, 1));
    EXPECT_TRUE(runsCanDecide(2, 2));
    EXPECT_TRUE(runsCanDecide(2, 7));
}

TEST(RunStats, QuasiPoissonPresenceInEveryRunOfOneSide)
{
    // The seed-04 shape: no waits in three runs, 12, 14, 9 in the other three (1 s each).
    // Rates 0 and 35/3; the after side's Pearson chi-square is 12.667 / 11.667 = 1.086 on 4 df,
    // so the dispersion stays at its floor 1; z = (35 - 17.5) / sqrt(35 * 0.25) = 5.916.
    const RateTest r = quasiPoissonRateTest({0, 0, 0}, {1, 1, 1}, {12, 14, 9}, {1, 1, 1});
    EXPECT_DOUBLE_EQ(r.dispersion, 1.0);
    EXPECT_DOUBLE_EQ(r.df, 4.0);
    EXPECT_NEAR(r.z, 17.5 / std::sqrt(8.75), 1e-12);
    EXPECT_NEAR(r.p_value, tTail4(17.5 / std::sqrt(8.75)), 1e-12);
    EXPECT_NEAR(r.p_value, 0.0041, 0.0001);
    EXPECT_DOUBLE_EQ(r.rate_before, 0.0);
    EXPECT_NEAR(r.rate_after, 35.0 / 3.0, 1e-12);
    // Symmetric: the same evidence the other way round.
    EXPECT_NEAR(quasiPoissonRateTest({12, 14, 9}, {1, 1, 1}, {0, 0, 0}, {1, 1, 1}).z, -r.z, 1e-12);
}

TEST(RunStats, QuasiPoissonInflatesByTheRunsDispersion)
{
    // Rates 200 and 400 a run; Pearson (100^2 + 100^2) / 200 + (200^2 + 200^2) / 400 = 300 on 4 df: phi 75.
    // z = (1200 - 900) / sqrt(75 * 1800 * 0.25) = 1.633: the runs disagree too much to decide.
    const RateTest r = quasiPoissonRateTest({100, 300, 200}, {1, 1, 1}, {400, 200, 600}, {1, 1, 1});
    EXPECT_NEAR(r.dispersion, 75.0, 1e-12);
    EXPECT_NEAR(r.z, 300.0 / std::sqrt(33750.0), 1e-12);
    EXPECT_NEAR(r.p_value, tTail4(r.z), 1e-12);
    EXPECT_GT(r.p_value, 0.1);
    // Plain Poisson (phi 1) would have called it: z = 300 / sqrt(450) = 14.1.
}

TEST(RunStats, QuasiPoissonWeighsExposure)
{
    // Twice the exposure after, twice the count per run: rates 10 and 20, no dispersion (phi 1).
    // After's share of exposure 2/3; z = (80 - 66.67) / sqrt(100 * 2/3 * 1/3) = 2.828 on 2 df.
    const RateTest r = quasiPoissonRateTest({10, 10}, {1, 1}, {40, 40}, {2, 2});
    EXPECT_DOUBLE_EQ(r.dispersion, 1.0);
    EXPECT_NEAR(r.z, std::sqrt(8.0), 1e-12);
    EXPECT_NEAR(r.p_value, tTail2(std::sqrt(8.0)), 1e-12);
    EXPECT_NEAR(r.p_value, 1.0 - std::sqrt(8.0) / std::sqrt(10.0), 1e-12);
    // Nothing counted on either side: no evidence.
    EXPECT_DOUBLE_EQ(quasiPoissonRateTest({0, 0}, {1, 1}, {0, 0}, {1, 1}).p_value, 1.0);
}

TEST(RunStats, TQuantileInvertsTheTable)
{
    EXPECT_NEAR(studentTQuantile(0.05, 4), 2.776, 1e-3);
    EXPECT_NEAR(studentTQuantile(0.01, 10), 3.169, 1e-3);
    EXPECT_NEAR(studentTQuantile(0.4, 26), 0.856, 1e-3);   // one-sided 0.80 point
    EXPECT_NEAR(studentTQuantile(0.05, 1e7), 1.960, 1e-3);
}

TEST(RunStats, RunsToDecideFollowsTheTTable)
{
    // var 1 (both sides together), delta 1, alpha 0.01, power 0.8: n = 14 satisfies
    // (t.995,26 + t.80,26)^2 = (2.779 + 0.856)^2 = 13.21 <= 14; n = 13 does not: (2.797 + 0.857)^2 = 13.35 > 13.
    EXPECT_EQ(runsToDecide(0.5, 0.5, 1.0, 0.01), 14u);
    // The ops/s: -41% with CV 28% and 15% (mean 100 -> 59): n = 8, (2.977 + 0.868)^2 = 14.78 <= 8 * 1681 / 862.3.
    EXPECT_EQ(runsToDecide(28.0 * 28.0, 8.85 * 8.85, -41.0, 0.01), 8u);
    EXPECT_EQ(runsToDecide(1.0, 1.0, 0.01, 0.01), 0u) << "beyond max_runs: none";
    EXPECT_EQ(runsToDecide(1.0, 1.0, 0.0, 0.01), 0u);
}
