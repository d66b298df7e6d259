// SPDX-License-Identifier: GPL-2.0-or-later
#include <gtest/gtest.h>

#include "lockscope/capture/histogram.h"
#include "lockscope/capture/units.h"

using namespace lockscope;

TEST(Units, DurationPicksTheUnitAtEachThousand)
{
    EXPECT_EQ(units::duration(0), "0 ns");
    EXPECT_EQ(units::duration(975), "975 ns");
    EXPECT_EQ(units::duration(999.4), "999 ns");
    EXPECT_EQ(units::duration(1000), "1.00 us");
    EXPECT_EQ(units::duration(27490), "27.49 us");
    EXPECT_EQ(units::duration(1.95e6), "1.95 ms");
    EXPECT_EQ(units::duration(2e9), "2.00 s");
    EXPECT_EQ(units::duration(150e9), "2.50 m");
    EXPECT_EQ(units::duration(4320e9), "1.20 h");
}

TEST(Units, NegativeDurationsKeepTheirSign)
{
    EXPECT_EQ(units::duration(-1500), "-1.50 us");
    EXPECT_EQ(units::duration(-12), "-12 ns");
}

TEST(Units, BucketLabelsAreTimesWithThreeDigits)
{
    // Each label is its bucket's lower bound, wherever that bound falls.
    for (unsigned b = 0; b < Log2Hist::kBuckets; ++b) {
        const uint64_t low = Log2Hist::bucketLow(b);
        const std::string label = units::bucketLabel(b);
        if (low < 1000)
            EXPECT_EQ(label, std::to_string(low) + " ns");
        else
            EXPECT_NE(label.find(low < 1000000 ? " us" : low < 1000000000 ? " ms" : " s"), std::string::npos)
                << b << ": " << label;
    }
    EXPECT_EQ(units::bucketLabel(Log2Hist::bucketOf(1024)), "1.02 us");
    EXPECT_EQ(units::bucketLabel(Log2Hist::bucketOf(16384)), "16.4 us");
    EXPECT_EQ(units::bucketLabel(Log2Hist::bucketOf(131072)), "131 us");
    EXPECT_EQ(units::bucketLabel(Log2Hist::bucketOf(1u << 20)), "1.05 ms");
}
