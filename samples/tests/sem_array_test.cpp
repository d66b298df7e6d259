// SPDX-License-Identifier: GPL-2.0-or-later
#include <gtest/gtest.h>

#include <atomic>
#include <thread>
#include <vector>

#include "lockscope/scaling/runner.h"
#include "lockscope/scaling/sem_array.h"

using namespace lockscope::scaling;

class SemArrayTest : public ::testing::TestWithParam<Variant> {};

TEST_P(SemArrayTest, PostWakesASleeper)
{
    auto a = makeSemArray(GetParam(), 4);
    std::atomic<bool> returned{false};
    bool granted = false;
    std::thread sleeper([&] {
        granted = a->wait(2);
        returned = true;
    });
    // The waiter must be asleep on the semaphore before we post, or the test
    // would only exercise the fast path.
    while (a->audit(2).sleepers == 0)
        std::this_thread::yield();
    EXPECT_FALSE(returned.load());
    a->post(2);
    sleeper.join();
    EXPECT_TRUE(granted);
    auto audit = a->audit(2);
    EXPECT_EQ(audit.value, 0);
    EXPECT_EQ(audit.posted, 1u);
    EXPECT_EQ(audit.taken, 1u);
}

TEST_P(SemArrayTest, RemoveReleasesEverySleeper)
{
    auto a = makeSemArray(GetParam(), 3);
    constexpr int kSleepers = 6;
    std::atomic<int> failed{0};
    std::vector<std::thread> pool;
    for (int i = 0; i < kSleepers; ++i)
        pool.emplace_back([&, i] {
            if (!a->wait(i % 3))
                ++failed;
        });
    auto sleeping = [&] {
        size_t n = 0;
        for (int s = 0; s < 3; ++s)
            n += a->audit(s).sleepers;
        return n;
    };
    while (sleeping() < kSleepers)
        std::this_thread::yield();
    a->remove();
    for (auto& t : pool)
        t.join();
    EXPECT_EQ(failed.load(), kSleepers);
    EXPECT_EQ(sleeping(), 0u);
    EXPECT_FALSE(a->wait(0));
    EXPECT_FALSE(a->tryWait(0));
}

TEST_P(SemArrayTest, ProducersAndConsumersBalanceWithoutLostWakeups)
{
    auto a = makeSemArray(GetParam(), 2);
    constexpr int kPerThread = 20000;
    std::vector<std::thread> pool;
    for (int p = 0; p < 2; ++p)
        pool.emplace_back([&, p] {
            for (int i = 0; i < kPerThread; ++i)
                a->post(p);
        });
    std::atomic<int> taken{0};
    for (int c = 0; c < 4; ++c)
        pool.emplace_back([&, c] {
            for (int i = 0; i < kPerThread / 2; ++i)
                if (a->wait(c % 2))
                    ++taken;
        });
    for (auto& t : pool)
        t.join();  // a lost wakeup hangs here (ctest timeout)
    EXPECT_EQ(taken.load(), 2 * kPerThread);
    for (int s = 0; s < 2; ++s) {
        auto audit = a->audit(s);
        EXPECT_EQ(audit.value, 0);
        EXPECT_EQ(audit.posted, static_cast<unsigned long long>(kPerThread));
        EXPECT_EQ(audit.taken, static_cast<unsigned long long>(kPerThread));
        EXPECT_EQ(audit.sleepers, 0u);
    }
}

TEST_P(SemArrayTest, PostOfNWakesNSleepersOfThatSemaphoreOnly)
{
    auto a = makeSemArray(GetParam(), 2);
    std::atomic<int> granted0{0}, granted1{0}, refused{0};
    std::vector<std::thread> pool;
    for (int i = 0; i < 6; ++i)
        pool.emplace_back([&, i] {
            int num = i < 4 ? 0 : 1;
            if (!a->wait(num))
                ++refused;
            else
                ++(num == 0 ? granted0 : granted1);
        });
    while (a->audit(0).sleepers < 4 || a->audit(1).sleepers < 2)
        std::this_thread::yield();
    a->post(0, 3);
    while (granted0.load() < 3)
        std::this_thread::yield();  // a lost wakeup hangs here (ctest timeout)
    auto audit0 = a->audit(0), audit1 = a->audit(1);
    EXPECT_EQ(audit0.value, 0);
    EXPECT_EQ(audit0.taken, 3u);
    EXPECT_EQ(audit0.sleepers, 1u);
    EXPECT_EQ(audit1.sleepers, 2u);  // a post to 0 never grants a sleeper of 1
    EXPECT_EQ(granted1.load(), 0);
    a->remove();
    for (auto& t : pool)
        t.join();
    EXPECT_EQ(granted0.load(), 3);
    EXPECT_EQ(granted1.load(), 0);
    EXPECT_EQ(refused.load(), 3);
}

TEST_P(SemArrayTest, PairsStressKeepsInvariants)
{
    // N worker/partner pairs on one array with idle sleepers queued (the
    // pair's setup); check() verifies conservation per semaphore, one token
    // per pair, grants matching the threads' returns, idle sleepers untouched.
    for (unsigned threads : {1u, 3u, 6u}) {
        PairInfo pair = *findPair("sem-postwait");
        pair.make = [](Variant v, unsigned t, bool p) { return makeSemPostWait(v, t, 32, p); };
        PointResult r = runOps(pair, GetParam(), threads, 3000, true);
        EXPECT_EQ(r.violation, "") << threads << " threads";
        EXPECT_EQ(r.ops, threads * 3000ull);
        ASSERT_EQ(r.locks.size(), 1u);
        // Each round trip is two posts and two waits, each taking a lock.
        EXPECT_GE(r.locks[0].wait.count(), 4 * r.ops);
    }
}

TEST_P(SemArrayTest, PairRunsWithItsIdleSleepers)
{
    PointResult r = runOps(*findPair("sem-postwait"), GetParam(), 2, 500, false);
    EXPECT_EQ(r.violation, "");
    EXPECT_EQ(r.ops, 1000u);
}

TEST_P(SemArrayTest, TimedRunShutsDownBlockedWorkers)
{
    // Workers are asleep in wait() when the harness stops; shutdown() must
    // release them so that the run ends at all.
    PointResult r = runPoint(*findPair("sem-postwait"), GetParam(), 5, 0.05, false);
    EXPECT_EQ(r.violation, "");
    EXPECT_GT(r.ops, 0u);
}

INSTANTIATE_TEST_SUITE_P(Variants, SemArrayTest, ::testing::Values(Variant::Before, Variant::After),
                         [](const auto& p) { return std::string(variantName(p.param)); });
