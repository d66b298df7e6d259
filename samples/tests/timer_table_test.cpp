// SPDX-License-Identifier: GPL-2.0-or-later
#include <gtest/gtest.h>

#include <atomic>
#include <thread>
#include <vector>

#include "lockscope/scaling/runner.h"
#include "lockscope/scaling/timer_table.h"

using namespace lockscope::scaling;

class TimerTableTest : public ::testing::TestWithParam<Variant> {};

TEST_P(TimerTableTest, CreateGetSetDelete)
{
    auto t = makeTimerTable(GetParam());
    int a = t->create(100, 10), b = t->create(200, 0);
    EXPECT_NE(a, b);
    EXPECT_EQ(t->liveCount(), 2u);
    auto v = t->get(a);
    ASSERT_TRUE(v.has_value());
    EXPECT_EQ(v->expires_ns, 100);
    EXPECT_TRUE(t->set(a, 500, 10));
    EXPECT_EQ(t->get(a)->expires_ns, 500);
    EXPECT_EQ(t->get(a)->overruns, 1u);
    EXPECT_TRUE(t->remove(a));
    EXPECT_FALSE(t->get(a).has_value());
    EXPECT_FALSE(t->remove(a));
    EXPECT_FALSE(t->set(a, 1, 1));
    EXPECT_EQ(t->liveCount(), 1u);
    EXPECT_FALSE(t->get(987654).has_value());
}

// Lookups race with deletions of the very timers they look up; freed timers
// would be caught by ASan (use-after-free) or by the magic check (trap).
TEST_P(TimerTableTest, LookupsSurviveConcurrentDeletion)
{
    auto t = makeTimerTable(GetParam());
    constexpr int kIds = 64;
    std::vector<std::atomic<int>> ids(kIds);
    for (auto& id : ids)
        id = t->create(1, 1);
    std::atomic<bool> stop{false};
    std::atomic<uint64_t> found{0}, missed{0};
    std::vector<std::thread> readers;
    for (int r = 0; r < 3; ++r)
        readers.emplace_back([&, r] {
            unsigned i = static_cast<unsigned>(r);
            while (!stop.load() || i < 2000) {
                if (t->get(ids[i++ % kIds].load()))
                    ++found;
                else
                    ++missed;
            }
        });
    // Deletions start only once lookups are running, so that they overlap.
    while (found.load() + missed.load() < 100)
        std::this_thread::yield();
    for (int round = 0; round < 20000; ++round) {
        auto& slot = ids[static_cast<size_t>(round) % kIds];
        int fresh = t->create(round, 1);
        ASSERT_TRUE(t->remove(slot.exchange(fresh)));
    }
    stop = true;
    for (auto& th : readers)
        th.join();
    EXPECT_EQ(t->liveCount(), static_cast<size_t>(kIds));
    EXPECT_GT(found.load(), 0u);
    for (auto& id : ids)
        EXPECT_TRUE(t->get(id.load()).has_value());
}

TEST_P(TimerTableTest, ScenarioStressKeepsInvariants)
{
    PointResult r = runOps(*findPair("posix-timer-lookup"), GetParam(), 4, 20000, true);
    EXPECT_EQ(r.violation, "");
    ASSERT_EQ(r.locks.size(), 2u);
    // Before: every lookup takes the global lock; after: only writers do.
    if (GetParam() == Variant::Before)
        EXPECT_GE(r.locks[0].wait.count(), r.ops);
    else
        EXPECT_LT(r.locks[0].wait.count(), r.ops / 8);
}

INSTANTIATE_TEST_SUITE_P(Variants, TimerTableTest, ::testing::Values(Variant::Before, Variant::After),
                         [](const auto& p) { return std::string(variantName(p.param)); });
