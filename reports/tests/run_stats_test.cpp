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
