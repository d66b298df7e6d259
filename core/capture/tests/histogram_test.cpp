// SPDX-License-Identifier: GPL-2.0-or-later
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <vector>

#include "lockscope/capture/histogram.h"
#include "sample_capture.h"

namespace lockscope {
namespace {

TEST(Log2Hist, BucketsAtEveryPowerOfTwoBoundary)
{
    EXPECT_EQ(Log2Hist::bucketOf(0), 0u);
    EXPECT_EQ(Log2Hist::bucketOf(1), 0u);
    EXPECT_EQ(Log2Hist::bucketOf(UINT64_MAX), 63u);
    for (unsigned i = 1; i < 64; ++i) {
        const uint64_t p = uint64_t { 1 } << i;
        SCOPED_TRACE(i);
        EXPECT_EQ(Log2Hist::bucketOf(p - 1), i - 1);
        EXPECT_EQ(Log2Hist::bucketOf(p), i);
        EXPECT_EQ(Log2Hist::bucketOf(p + 1), i == 1 ? 1u : i); // 3 is still in [2, 3]
        EXPECT_EQ(Log2Hist::bucketLow(i), p);
        EXPECT_EQ(Log2Hist::bucketHigh(i - 1), p - 1);
    }
    EXPECT_EQ(Log2Hist::bucketLow(0), 0u);
    EXPECT_EQ(Log2Hist::bucketHigh(63), UINT64_MAX);
}

TEST(Log2Hist, AddKeepsExactSummaries)
{
    Log2Hist h;
    EXPECT_TRUE(h.empty());
    EXPECT_EQ(h.min(), 0u);
    EXPECT_EQ(h.percentile(50), 0u);
    h.add(5);
    h.add(1000, 3);
    h.add(0);
    EXPECT_EQ(h.count(), 5u);
    EXPECT_EQ(h.total(), 3005u);
    EXPECT_EQ(h.min(), 0u);
    EXPECT_EQ(h.max(), 1000u);
    EXPECT_EQ(h.mean(), 601u);
    EXPECT_EQ(h.bucket(0), 1u);
    EXPECT_EQ(h.bucket(2), 1u);
    EXPECT_EQ(h.bucket(9), 3u);
    EXPECT_TRUE(h.consistent());
    h.add(7, 0); // no-op
    EXPECT_EQ(h.count(), 5u);
}

TEST(Log2Hist, SaturatesInsteadOfWrapping)
{
    Log2Hist h;
    h.add(UINT64_MAX);
    h.add(UINT64_MAX);
    EXPECT_EQ(h.total(), UINT64_MAX);
    EXPECT_EQ(h.count(), 2u);
    h.add(3, UINT64_MAX); // count and the bucket saturate as well
    EXPECT_EQ(h.count(), UINT64_MAX);
    EXPECT_EQ(h.bucket(1), UINT64_MAX);
    Log2Hist big;
    big.add(1u << 20, UINT64_MAX / 2);
    big.merge(big);
    EXPECT_EQ(big.total(), UINT64_MAX);
    EXPECT_EQ(big.count(), UINT64_MAX - 1);
    EXPECT_EQ(saturatingAdd(UINT64_MAX, 1), UINT64_MAX);
    EXPECT_EQ(saturatingAdd(2, 3), 5u);
}

Log2Hist randomHist(testing::Rng& rng, unsigned n)
{
    Log2Hist h;
    for (unsigned i = 0; i < n; ++i)
        h.add(rng.next() >> rng.below(64), 1 + rng.below(5));
    return h;
}

TEST(Log2Hist, MergeIsAssociativeAndCommutative)
{
    testing::Rng rng(42);
    for (int round = 0; round < 200; ++round) {
        const Log2Hist a = randomHist(rng, static_cast<unsigned>(rng.below(50)));
        const Log2Hist b = randomHist(rng, static_cast<unsigned>(rng.below(50)));
        const Log2Hist c = randomHist(rng, static_cast<unsigned>(rng.below(50)));
        Log2Hist ab = a, ba = b;
        ab.merge(b);
        ba.merge(a);
        EXPECT_EQ(ab, ba);
        Log2Hist ab_c = ab;
        ab_c.merge(c);
        Log2Hist bc = b;
        bc.merge(c);
        Log2Hist a_bc = a;
        a_bc.merge(bc);
        EXPECT_EQ(ab_c, a_bc);
        EXPECT_TRUE(ab_c.consistent());
        // Merging equals adding the same values into one histogram.
        EXPECT_EQ(ab_c.count(), a.count() + b.count() + c.count());
    }
}

// Only the filled range is stored; every way of reading and every way of
// building the same counts gives the same histogram as 64 plain counters.
TEST(Log2Hist, StoresItsFilledRangeAndReadsAsAllBuckets)
{
    testing::Rng rng(11);
    for (int round = 0; round < 200; ++round) {
        std::array<uint64_t, Log2Hist::kBuckets> plain{};
        std::vector<uint64_t> values;
        Log2Hist added, merged;
        const unsigned lo = unsigned(rng.below(64)), width = unsigned(rng.below(64 - lo));
        for (unsigned i = 0, n = unsigned(rng.below(12)); i < n; ++i) {
            const unsigned b = lo + unsigned(rng.below(width + 1));
            const uint64_t inBucket = Log2Hist::bucketHigh(b) - Log2Hist::bucketLow(b) + 1;
            const uint64_t v = Log2Hist::bucketLow(b) + rng.next() % inBucket;
            ++plain[b];
            values.push_back(v);
            added.add(v);
            Log2Hist one;
            one.add(v);
            merged.merge(one);
        }
        Log2Hist backwards;
        for (auto v = values.rbegin(); v != values.rend(); ++v)
            backwards.add(*v);
        SCOPED_TRACE(round);
        EXPECT_EQ(added.buckets(), plain);
        for (unsigned b = 0; b < Log2Hist::kBuckets; ++b)
            EXPECT_EQ(added.bucket(b), plain[b]) << "bucket " << b;
        EXPECT_EQ(added.bucket(Log2Hist::kBuckets), 0u) << "past the last bucket";
        EXPECT_EQ(merged, added);
        EXPECT_EQ(backwards, added);
        EXPECT_EQ(Log2Hist::fromParts(plain, added.count(), added.total(), added.min(), added.max()), added);
        EXPECT_TRUE(added.consistent());
    }
}

TEST(Log2Hist, MergeWithEmptyIsIdentity)
{
    testing::Rng rng(7);
    const Log2Hist a = randomHist(rng, 20);
    Log2Hist m = a;
    m.merge(Log2Hist {});
    EXPECT_EQ(m, a);
    Log2Hist e;
    e.merge(a);
    EXPECT_EQ(e, a);
}

// The documented bound: the estimate lies in the same bucket as the exact
// nearest-rank value and inside [min, max], hence within a factor of 2.
void checkPercentiles(const std::vector<uint64_t>& values)
{
    Log2Hist h;
    for (uint64_t v : values)
        h.add(v);
    std::vector<uint64_t> sorted = values;
    std::sort(sorted.begin(), sorted.end());
    for (double p : { 1.0, 5.0, 10.0, 25.0, 50.0, 75.0, 90.0, 95.0, 99.0, 99.9, 100.0 }) {
        SCOPED_TRACE(p);
        const auto rank = static_cast<size_t>(std::ceil(p / 100.0 * static_cast<double>(sorted.size())));
        const uint64_t exact = sorted[std::max<size_t>(rank, 1) - 1];
        const uint64_t est = h.percentile(p);
        EXPECT_EQ(Log2Hist::bucketOf(est), Log2Hist::bucketOf(exact)) << "exact " << exact << " est " << est;
        EXPECT_GE(est, h.min());
        EXPECT_LE(est, h.max());
        if (exact >= 2) {
            // est < 2 * exact and exact < 2 * est, without overflowing near UINT64_MAX.
            EXPECT_TRUE(est <= exact || est - exact < exact) << "exact " << exact << " est " << est;
            EXPECT_TRUE(exact <= est || exact - est < est) << "exact " << exact << " est " << est;
        }
    }
    EXPECT_EQ(h.percentile(100), sorted.back());
    EXPECT_EQ(h.percentile(0), sorted.front());
}

TEST(Log2Hist, PercentileWithinBoundUniform)
{
    testing::Rng rng(1);
    std::vector<uint64_t> v;
    for (int i = 0; i < 5000; ++i)
        v.push_back(1000 + rng.below(100000));
    checkPercentiles(v);
}

TEST(Log2Hist, PercentileWithinBoundLogUniform)
{
    testing::Rng rng(2);
    std::vector<uint64_t> v;
    for (int i = 0; i < 5000; ++i)
        v.push_back(rng.next() >> rng.below(64));
    checkPercentiles(v);
}

TEST(Log2Hist, PercentileWithinBoundBimodal)
{
    // Mostly fast uncontended waits with a slow tail, as contention looks.
    testing::Rng rng(3);
    std::vector<uint64_t> v;
    for (int i = 0; i < 5000; ++i)
        v.push_back(rng.below(10) < 9 ? 200 + rng.below(300) : 2000000 + rng.below(8000000));
    checkPercentiles(v);
}

TEST(Log2Hist, PercentileWithinBoundConstantAndTiny)
{
    checkPercentiles(std::vector<uint64_t>(100, 777));
    checkPercentiles({ 0, 1, 1, 0, 1 });
    checkPercentiles({ UINT64_MAX, 0, 1ull << 63 });
    checkPercentiles({ 42 });
}

TEST(Log2Hist, AddSummaryRejectsInconsistentParts)
{
    std::array<uint64_t, Log2Hist::kBuckets> b {};
    b[3] = 2; // two values in [8, 15]
    Log2Hist h;
    EXPECT_TRUE(h.addSummary(b, 2, 20, 9, 11));
    EXPECT_EQ(h.count(), 2u);
    EXPECT_FALSE(h.addSummary(b, 3, 20, 9, 11)); // buckets sum to 2
    EXPECT_FALSE(h.addSummary(b, 2, 20, 4, 11)); // min in another bucket
    EXPECT_FALSE(h.addSummary(b, 2, 20, 9, 16)); // max in another bucket
    EXPECT_FALSE(h.addSummary(b, 2, 100, 9, 11)); // total > count*max
    EXPECT_FALSE(h.addSummary(b, 2, 10, 9, 11)); // total < count*min
    EXPECT_FALSE(h.addSummary(b, 2, 20, 11, 9)); // min > max
    EXPECT_EQ(h.count(), 2u) << "a rejected summary must leave the histogram untouched";
    EXPECT_TRUE(h.addSummary({}, 0, 0, 0, 0));
    EXPECT_FALSE(h.addSummary({}, 0, 5, 0, 0));
}

} // namespace
} // namespace lockscope
