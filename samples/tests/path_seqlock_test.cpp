// SPDX-License-Identifier: GPL-2.0-or-later
#include <gtest/gtest.h>

#include <atomic>
#include <thread>
#include <vector>

#include "lockscope/scaling/path_seqlock.h"
#include "lockscope/scaling/runner.h"

using namespace lockscope::scaling;

class PathSeqlockTest : public ::testing::TestWithParam<Variant> {};

TEST_P(PathSeqlockTest, ReadersNeverSeeATornPath)
{
    auto p = makePathSeqlock(GetParam());
    std::atomic<bool> stop{false};
    std::atomic<uint64_t> torn{0}, reads{0}, locked{0};
    std::vector<std::thread> pool;
    for (int r = 0; r < 3; ++r)
        pool.emplace_back([&, r] {
            uint64_t n = 0;
            while (!stop.load() || n < 1000) {
                auto s = p->read(r == 0 && n % 2 == 0);
                torn += !s.consistent();
                locked += s.locked;
                ++n;
            }
            reads += n;
        });
    for (uint64_t g = 1; g <= 50000; ++g)
        p->rename(static_cast<unsigned>(g % PathSeqlock::kComponents), g);
    stop = true;
    for (auto& t : pool)
        t.join();
    EXPECT_EQ(torn.load(), 0u);
    EXPECT_GT(locked.load(), 0u);
    auto last = p->read();
    EXPECT_TRUE(last.consistent());
    // The last rename of each component is visible.
    EXPECT_EQ(last.words[50000 % PathSeqlock::kComponents][0], 50000u);
    EXPECT_EQ(std::string(last.text.data()).size(), PathSeqlock::kComponents * (PathSeqlock::kWords * 16 + 1));
}

TEST_P(PathSeqlockTest, ScenarioStressKeepsInvariants)
{
    PointResult r = runOps(*findPair("seqlock-readers"), GetParam(), 4, 20000, true);
    EXPECT_EQ(r.violation, "");
    ASSERT_EQ(r.locks.size(), 1u);
    EXPECT_EQ(r.locks[0].type, GetParam() == Variant::Before ? "spinlock" : "rwlock");
}

INSTANTIATE_TEST_SUITE_P(Variants, PathSeqlockTest, ::testing::Values(Variant::Before, Variant::After),
                         [](const auto& p) { return std::string(variantName(p.param)); });
