// SPDX-License-Identifier: GPL-2.0-or-later
// The syscall, function and user-lock probes read out per window
// (Session::drain, as lockscope agent does) while calls run: every call is in
// exactly one window, and a key idle for a window leaves its map.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include <pthread.h>
#include <sys/sem.h>
#include <time.h>

#include <gtest/gtest.h>

#include "contention_gen.h"
#include "lockscope/probes/probes.h"
#include "test_support.h"

namespace lockscope::probes {
namespace {

// As quietOptions(), read out per window (Options::drain) as the agent does.
Options quiet()
{
    Options o = quietOptions();
    o.drain = true;
    return o;
}

const ProbeStatus* findStatus(const Session& s, const std::string& prefix)
{
    for (const ProbeStatus& st : s.status())
        if (st.name.rfind(prefix, 0) == 0 && st.attached)
            return &st;
    return nullptr;
}

// A drained session on the default user locks (pthread mutexes); null when
// their uprobes did not attach.
std::unique_ptr<Session> userLockSession()
{
    Options o = quiet();
    o.user_locks = defaultUserLocks();
    auto s = Session::open(o);
    return findStatus(*s, "user_lock:pthread_mutex_lock") ? std::move(s) : nullptr;
}

// What the windows add up to, per latency name.
struct Tally {
    std::map<std::string, uint64_t> calls, errors;
    uint64_t user_waits = 0, user_holds = 0, lost = 0;
    unsigned windows_with_calls = 0;
    unsigned untimed_only_windows = 0; // windows with calls, none of them timed (timing budget)

    void add(const Snapshot& s, uint64_t user_lock)
    {
        uint64_t windowCalls = 0;
        lost += s.stats.lost;
        for (const LatencyRecord& r : s.latencies) {
            EXPECT_TRUE(r.hist.consistent()) << r.name;
            calls[r.name] += r.hist.count();
            errors[r.name] += r.errors;
            windowCalls += r.hist.count();
        }
        const bool any = windowCalls > 0;
        untimed_only_windows += any && s.stats.syscalls_untimed >= windowCalls ? 1u : 0u;
        for (const LockRecord& r : s.user_waits)
            if (r.lock_addr == user_lock)
                user_waits += r.hist.count();
        for (const LockRecord& r : s.user_holds)
            if (r.lock_addr == user_lock)
                user_holds += r.hist.count();
        windows_with_calls += any ? 1 : 0;
    }
};

// Runs `work` `rounds` times while a thread drains every few milliseconds,
// then drains once more. After each round it waits until a drain begun after
// the round has ended, so the rounds' calls come in windows of their own
// however the threads are scheduled (a busy machine starved the drainer:
// two windows where thirty were expected).
Tally drainWhile(Session& s, uint64_t user_lock, const std::function<void()>& work, unsigned rounds = 1)
{
    Tally t;
    std::atomic<bool> done { false };
    std::atomic<unsigned> drains { 0 };
    std::mutex mu;
    std::thread drainer([&] {
        while (!done.load()) {
            const Snapshot snap = s.drain();
            {
                std::lock_guard<std::mutex> g(mu);
                t.add(snap, user_lock);
            }
            ++drains;
            std::this_thread::sleep_for(std::chrono::milliseconds(3));
        }
    });
    for (unsigned r = 0; r < rounds; ++r) {
        work();
        awaitDrainBegunAfterNow(drains);
    }
    done = true;
    drainer.join();
    t.add(s.drain(), user_lock);
    return t;
}

TEST(WindowDrain, EverySyscallIsInExactlyOneWindow)
{
    LOCKSCOPE_REQUIRE_ROOT();
    Options o = quiet();
    o.syscalls = true;
    o.syscall_budget = 20000; // as record and the agent: untimed calls are counted too
    auto s = Session::open(o);
    ASSERT_TRUE(findStatus(*s, "syscall:timer_gettime")) << "no syscall hook attached";
    ASSERT_TRUE(s->drainable());
    constexpr int kFailing = 30000, kTimers = 30000, kRounds = 5;
    const Tally t = drainWhile(
        *s, 0,
        [&] {
            std::thread timers([] { test::timerCalls(kTimers / kRounds); });
            sembuf op { 0, 1, 0 };
            for (int i = 0; i < kFailing / kRounds; ++i)
                semop(-1, &op, 1); // EINVAL: one call, one error
            timers.join();
        },
        kRounds);
    // glibc implements semop() with the semtimedop syscall on some architectures.
    const uint64_t semCalls = t.calls.count("semop") ? t.calls.at("semop") : 0;
    const uint64_t semtimedopCalls = t.calls.count("semtimedop") ? t.calls.at("semtimedop") : 0;
    const uint64_t semErrors = (t.errors.count("semop") ? t.errors.at("semop") : 0) +
        (t.errors.count("semtimedop") ? t.errors.at("semtimedop") : 0);
    EXPECT_EQ(semCalls + semtimedopCalls, uint64_t { kFailing });
    EXPECT_EQ(semErrors, uint64_t { kFailing });
    EXPECT_EQ(t.calls.count("timer_gettime") ? t.calls.at("timer_gettime") : 0, uint64_t { kTimers });
    EXPECT_GE(t.windows_with_calls, 3u) << "the calls were spread over windows, not read at the end";
    EXPECT_EQ(t.lost, 0u);
    for (const LatencyRecord& r : s->drain().latencies)
        EXPECT_EQ(r.hist.count(), 0u) << r.name << ": a window without calls has none";
}

// A budget so small that most windows have no timed call: their calls take
// the times of the last window that had some, and none is lost.
TEST(WindowDrain, AWindowWithoutTimedCallsTakesTheLastTimedShape)
{
    LOCKSCOPE_REQUIRE_ROOT();
    Options o = quiet();
    o.syscalls = true;
    o.syscall_budget = 50;
    auto s = Session::open(o);
    ASSERT_TRUE(findStatus(*s, "syscall:timer_gettime")) << "no syscall hook attached";
    // A burst sets a long period (the calls of 10 ms per timed one), then a
    // window of a few calls, in the burst's countdown, has none timed. The
    // countdown reads no clock: however slowly the rounds run, few of the
    // small ones meet a timed call.
    constexpr int kTimers = 40000, kRounds = 20, kSmall = 50;
    int round = 0;
    const Tally t = drainWhile(
        *s, 0, [&] { test::timerCalls(round++ % 2 ? kSmall : kTimers * 2 / kRounds - kSmall); }, kRounds);
    EXPECT_EQ(t.calls.count("timer_gettime") ? t.calls.at("timer_gettime") : 0, uint64_t { kTimers });
    EXPECT_EQ(t.lost, 0u);
    EXPECT_GE(t.windows_with_calls, 3u) << "the calls were spread over windows";
    EXPECT_GE(t.untimed_only_windows, 1u) << "no window without a timed call: the case is not exercised";
}

TEST(WindowDrain, EveryFunctionCallIsInExactlyOneWindow)
{
    LOCKSCOPE_REQUIRE_ROOT();
    Options o = quiet();
    o.functions = Backend::Auto;
    o.syscalls = true; // open() needs one attachable probe
    auto s = Session::open(o);
    const ProbeStatus* st = findStatus(*s, "function:__lock_timer");
    if (!st)
        st = findStatus(*s, "function:lock_timer");
    if (!st) {
        std::string why;
        for (const ProbeStatus& p : s->status())
            if (p.name == "function:__lock_timer")
                why = p.reason;
        GTEST_SKIP() << "skipped: no hook on __lock_timer or lock_timer here (" << why << ")";
    }
    constexpr int kTimers = 20000, kRounds = 5;
    const Tally t = drainWhile(
        *s, 0, [&] { test::timerCalls(kTimers / kRounds); }, kRounds);
    const std::string name = st->name.substr(std::string("function:").size());
    // timer_gettime calls lock_timer once per call; other tasks of this
    // process may add a few.
    EXPECT_GE(t.calls.count(name) ? t.calls.at(name) : 0, uint64_t { kTimers });
    EXPECT_GE(t.windows_with_calls, 3u);
}

TEST(WindowDrain, EveryUserLockWaitAndHoldIsInExactlyOneWindow)
{
    LOCKSCOPE_REQUIRE_ROOT();
    auto s = userLockSession();
    ASSERT_TRUE(s) << "pthread_mutex_lock uprobes did not attach";
    pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
    constexpr int kThreads = 3, kIters = 4000;
    const Tally t = drainWhile(*s, reinterpret_cast<uint64_t>(&m), [&] {
        std::vector<std::thread> pool;
        pool.reserve(kThreads);
        for (int i = 0; i < kThreads; ++i)
            pool.emplace_back([&] {
                for (int k = 0; k < kIters; ++k) {
                    pthread_mutex_lock(&m);
                    pthread_mutex_unlock(&m);
                }
            });
        for (auto& th : pool)
            th.join();
    });
    EXPECT_EQ(t.user_waits, uint64_t { kThreads } * kIters);
    EXPECT_EQ(t.user_holds, uint64_t { kThreads } * kIters);
}

// Each round locks locks no round locked before (as processes that come and
// go would); more rounds than the map has room for, unless a key idle for a
// window is deleted.
TEST(WindowDrain, IdleUserLockKeysLeaveTheirMaps)
{
    LOCKSCOPE_REQUIRE_ROOT();
    auto s = userLockSession();
    ASSERT_TRUE(s) << "pthread_mutex_lock uprobes did not attach";
    constexpr size_t kPerRound = 6000, kRounds = 4; // ulock.bpf.c's maps hold 16384 keys
    uint64_t waits = 0, mapFull = 0;
    std::vector<std::vector<pthread_mutex_t>> rounds; // kept: a freed round's addresses would come back
    for (size_t round = 0; round < kRounds; ++round) {
        std::vector<pthread_mutex_t>& locks = rounds.emplace_back(kPerRound);
        for (pthread_mutex_t& m : locks) {
            pthread_mutex_init(&m, nullptr);
            pthread_mutex_lock(&m);
            pthread_mutex_unlock(&m);
        }
        const auto first = uint64_t(uintptr_t(locks.data())), end = uint64_t(uintptr_t(locks.data() + kPerRound));
        for (int window = 0; window < 2; ++window) {
            const Snapshot snap = s->drain();
            mapFull += snap.stats.map_full;
            for (const LockRecord& r : snap.user_waits)
                if (r.lock_addr >= first && r.lock_addr < end)
                    waits += r.hist.count();
        }
    }
    EXPECT_EQ(mapFull, 0u) << "keys of locks gone idle stayed in the maps";
    EXPECT_EQ(waits, uint64_t { kPerRound * kRounds });
}

// Threads that exit holding locks never unlock them: a drain drops their
// entries as stale holds, so more of them than the holding map has room
// for (ulock.bpf.c: 65536) never fill it.
TEST(WindowDrain, HoldsOfThreadsThatExitedHoldingLeaveTheMap)
{
    LOCKSCOPE_REQUIRE_ROOT();
    auto s = userLockSession();
    ASSERT_TRUE(s) << "pthread_mutex_lock uprobes did not attach";
    constexpr size_t kPerThread = 5000, kThreads = 14; // a window's new wait keys fit its map (16384)
    std::vector<std::vector<pthread_mutex_t>> held(kThreads); // never unlocked
    uint64_t mapFull = 0, stale = 0;
    for (auto& locks : held) {
        locks.resize(kPerThread);
        std::thread([&locks] {
            for (pthread_mutex_t& m : locks) {
                pthread_mutex_init(&m, nullptr);
                pthread_mutex_lock(&m);
            }
        }).join();
        const Snapshot snap = s->drain();
        mapFull += snap.stats.map_full;
        stale += snap.stats.stale_holds;
    }
    EXPECT_EQ(mapFull, 0u) << "holds of exited threads stayed in the holding map";
    EXPECT_EQ(stale, uint64_t { kPerThread * kThreads });
    EXPECT_EQ(s->drain().stats.stale_holds, 0u) << "dropped once";
}

} // namespace
} // namespace lockscope::probes
