// SPDX-License-Identifier: GPL-2.0-or-later
#include <gtest/gtest.h>

#include "lockscope/reports/significance.h"

using namespace lockscope;
using namespace lockscope::reports;

TEST(Significance, GammaQMatchesChiSquareTable)
{
    // Chi-square critical values: P(X > 3.841 | 1 dof) = 0.05, P(X > 11.345 | 3 dof) = 0.01.
    EXPECT_NEAR(gammaQ(0.5, 3.841 / 2), 0.05, 1e-3);
    EXPECT_NEAR(gammaQ(1.5, 11.345 / 2), 0.01, 1e-4);
    EXPECT_NEAR(gammaQ(5.0, 1e-9), 1.0, 1e-9);
    EXPECT_LT(gammaQ(10.0, 100.0), 1e-20);
}

TEST(Significance, IdenticalHistogramsAreHomogeneous)
{
    Log2Hist a;
    for (uint64_t v = 100; v < 100000; v *= 2)
        a.add(v, 50);
    const auto r = chiSquareHomogeneity(a, a);
    EXPECT_DOUBLE_EQ(r.statistic, 0.0);
    EXPECT_GT(r.dof, 0u);
    EXPECT_DOUBLE_EQ(r.p_value, 1.0);
}

TEST(Significance, ShiftedDistributionIsDetected)
{
    Log2Hist a, b;
    a.add(1000, 200);
    a.add(2000, 200);
    b.add(4000, 200);
    b.add(8000, 200);
    EXPECT_LT(chiSquareHomogeneity(a, b).p_value, 1e-10);
}

TEST(Significance, SparseBucketsArePooled)
{
    // Each side has a few lone outliers; pooling keeps expected counts >= 5.
    Log2Hist a, b;
    a.add(1000, 100);
    a.add(1u << 20, 1);
    b.add(1000, 100);
    b.add(1u << 24, 1);
    const auto r = chiSquareHomogeneity(a, b);
    EXPECT_LE(r.dof, 1u);
    EXPECT_GT(r.p_value, 0.05);
}

TEST(Significance, PoissonRateTest)
{
    EXPECT_GT(poissonRateTest(1000, 10, 1030, 10), 0.3);     // within noise
    EXPECT_LT(poissonRateTest(1000, 10, 100, 10), 1e-10);    // 10x fewer
    EXPECT_GT(poissonRateTest(1000, 10, 2000, 20), 0.9);     // same rate, twice the time
    EXPECT_DOUBLE_EQ(poissonRateTest(0, 1, 0, 1), 1.0);
    EXPECT_NEAR(poissonRateTest(5, 1, 5, 1), 1.0, 1e-9);     // exact binomial branch
}

TEST(Significance, EffectFloorSuppressesTinyButCertainChanges)
{
    Log2Hist a, b;
    a.add(1000, 10'000'000);
    b.add(1000, 10'100'000);  // +1%: statistically certain at this N, but noise in practice
    const Significance s = testHistograms(a, 10, b, 10, 1.0, 0.01, 5.0);
    EXPECT_LT(s.rate_p, 0.01);
    EXPECT_FALSE(s.significant);
}
