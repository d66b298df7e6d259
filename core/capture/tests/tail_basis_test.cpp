// SPDX-License-Identifier: GPL-2.0-or-later
// What a wait histogram's tail figures rest on under the timing budget
// (tail_basis.h), and the wait_untimed members that carry it in a capture.
#include <gtest/gtest.h>

#include "lockscope/capture/io.h"
#include "lockscope/capture/tail_basis.h"
#include "sample_capture.h"

namespace lockscope {
namespace {

constexpr uint64_t kExact = uint64_t { 1 } << 23; // 8.4 ms: every wait from here up was timed

// 10000 waits of ~1 us, and `long_waits` of 10 ms (in the exact buckets).
Log2Hist waits(uint64_t long_waits)
{
    Log2Hist h;
    h.add(1000, 10000);
    if (long_waits)
        h.add(10000000, long_waits);
    return h;
}

TEST(TailBasis, EverythingTimedIsExact)
{
    const Log2Hist h = waits(3);
    EXPECT_TRUE(percentileBasis(h, 0, kExact, 99).exact);
    EXPECT_TRUE(maxBasis(h, 0, kExact).exact);
    EXPECT_EQ(percentileBasis(h, 0, kExact, 99).text(), "exact");
}

TEST(TailBasis, APercentileAmongTheAlwaysTimedWaitsIsExact)
{
    // 200 long waits of 10200: the p99 (rank 10098) and the p99.9 lie among them.
    const Log2Hist h = waits(200);
    EXPECT_TRUE(percentileBasis(h, 9000, kExact, 99).exact);
    EXPECT_TRUE(percentileBasis(h, 9000, kExact, 99.9).exact);
    EXPECT_FALSE(percentileBasis(h, 9000, kExact, 50).exact) << "the median rests on the sample";
    EXPECT_TRUE(maxBasis(h, 9000, kExact).exact) << "every wait as long as the max was timed";
}

TEST(TailBasis, BelowTheExactBucketsItIsAnEstimateThatSaysFromWhat)
{
    const Log2Hist h = waits(2); // the p99 is among the ~1 us waits
    const TailBasis p99 = percentileBasis(h, 9500, kExact, 99);
    EXPECT_FALSE(p99.exact);
    EXPECT_EQ(p99.timed, 502u);
    EXPECT_EQ(p99.waits, 10002u);
    EXPECT_EQ(p99.text(), "est. from 502 of 10002 timed");
    EXPECT_FALSE(p99.verdict) << "5 timed waits beyond it: too few to judge a change by";
    EXPECT_TRUE(percentileBasis(h, 8000, kExact, 99).verdict) << "20 timed beyond it";
    EXPECT_TRUE(maxBasis(h, 9500, kExact).exact) << "a 10 ms max is in the exact buckets";
    const TailBasis max = maxBasis(waits(0), 9500, kExact);
    EXPECT_FALSE(max.exact) << "a max below them may have been left untimed";
    EXPECT_FALSE(max.verdict);
    EXPECT_FALSE(maxBasis(waits(2), 9500, 0).exact) << "no exact tail claimed (older captures)";
}

TEST(TailBasis, ExactWaitNsIsReadFromTheFilters)
{
    Meta m;
    EXPECT_EQ(exactWaitNs(m), 0u);
    m.filters["exact_wait_ns"] = "8388608";
    EXPECT_EQ(exactWaitNs(m), kExact);
    m.filters["exact_wait_ns"] = "lots";
    EXPECT_EQ(exactWaitNs(m), 0u) << "not a number: no exact tail claimed";
}

TEST(TailBasis, WaitUntimedRoundTripsAndIsAbsentWhenZero)
{
    Capture c = testing::makeSemopCapture(testing::SemopScenario::Baseline);
    ASSERT_FALSE(c.locks.empty());
    ASSERT_FALSE(c.locks[0].sites.empty());
    Lock& l = c.locks[0];
    l.wait_untimed = l.wait.count() / 2;
    l.sites[0].wait_untimed = l.sites[0].wait.count() / 2;
    nlohmann::json j = toJson(c);
    EXPECT_EQ(j["locks"][0]["wait_untimed"], l.wait_untimed);
    if (c.locks.size() > 1) {
        EXPECT_FALSE(j["locks"][1].contains("wait_untimed")) << "every wait timed: the old shape";
    }
    EXPECT_EQ(fromJson(j), c);
    j["locks"][0]["wait_untimed"] = l.wait.count() + 1;
    EXPECT_THROW(fromJson(j), std::exception) << "more untimed waits than waits";
}

} // namespace
} // namespace lockscope
