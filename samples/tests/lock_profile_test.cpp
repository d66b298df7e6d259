// SPDX-License-Identifier: GPL-2.0-or-later
#include <gtest/gtest.h>

#include <atomic>
#include <mutex>
#include <shared_mutex>
#include <thread>
#include <vector>

#include "lockscope/scaling/lock_profile.h"
#include "lockscope/scaling/locks.h"

using namespace lockscope::scaling;

TEST(LockProfile, CountsEveryAcquisitionAcrossThreads)
{
    LockProfile profile("test.lock", "spinlock");
    Instrumented<SpinLock> lock(&profile);
    long counter = 0;
    std::vector<std::thread> pool;
    for (int t = 0; t < 4; ++t)
        pool.emplace_back([&] {
            for (int i = 0; i < 10000; ++i) {
                Guard g(lock);
                ++counter;
            }
        });
    for (auto& t : pool)
        t.join();
    EXPECT_EQ(counter, 40000);  // the spinlock excludes
    EXPECT_EQ(profile.wait().count(), 40000u);
    EXPECT_EQ(profile.hold().count(), 40000u);
    EXPECT_TRUE(profile.wait().consistent());
    EXPECT_TRUE(profile.hold().consistent());
}

TEST(LockProfile, WaitTimeCoversABlockedAcquisition)
{
    // The waiter announces itself and then tries the lock we hold. It can be
    // descheduled between the two, so repeat until one round shows the wait;
    // a wrapper that never measured waits would fail every round.
    bool sawWait = false;
    for (int round = 0; round < 50 && !sawWait; ++round) {
        LockProfile profile("test.mutex", "mutex");
        Instrumented<std::mutex> lock(&profile);
        lock.lock();
        std::atomic<bool> trying{false};
        std::thread waiter([&] {
            trying = true;
            Guard g(lock);
        });
        while (!trying.load())
            std::this_thread::yield();
        for (int i = 0; i < 200; ++i)
            std::this_thread::yield();
        lock.unlock();
        waiter.join();
        EXPECT_EQ(profile.wait().count(), 2u);
        EXPECT_EQ(profile.hold().count(), 2u);
        sawWait = profile.wait().max() > 0;
    }
    EXPECT_TRUE(sawWait);
}

TEST(LockProfile, SharedHoldersAreRecordedIndividually)
{
    LockProfile profile("test.rw", "rwlock");
    Instrumented<SpinRwLock> lock(&profile);
    uint64_t a = lock.lock_shared();
    uint64_t b = lock.lock_shared();  // readers share
    lock.unlock_shared(b);
    lock.unlock_shared(a);
    lock.lock();
    lock.unlock();
    EXPECT_EQ(profile.wait().count(), 3u);
    EXPECT_EQ(profile.hold().count(), 3u);
}

TEST(SpinRwLock, WriterExcludesReadersAndWriters)
{
    SpinRwLock l;
    l.lock();
    EXPECT_FALSE(l.try_lock_shared());
    EXPECT_FALSE(l.try_lock());
    l.unlock();
    EXPECT_TRUE(l.try_lock_shared());
    EXPECT_TRUE(l.try_lock_shared());
    EXPECT_FALSE(l.try_lock());
    l.unlock_shared();
    l.unlock_shared();
    EXPECT_TRUE(l.try_lock());
    l.unlock();
}
