// SPDX-License-Identifier: GPL-2.0-or-later
// The syscall timing budget against exact timing of the very same calls: two
// sessions attached at once, one timing every call, one timing at most 20000
// a second per CPU (record's default) and spreading the untimed calls like
// the timed ones. The calls alternate a short and a longer semop in each thread (a
// fixed countdown would time only one of the two), then timer_gettime.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <stdexcept>
#include <string>
#include <thread>

#include <sys/ipc.h>
#include <sys/sem.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include "contention_gen.h"
#include "lockscope/probes/probes.h"
#include "test_support.h"

namespace lockscope::probes {
namespace {

Options syscallsOnly(uint32_t budget)
{
    Options o;
    o.wait = Backend::Off;
    o.hold = Backend::Off;
    o.functions = Backend::Off;
    o.cpu_frequency_hz = 0;
    o.follow_forks = false;
    o.syscalls = true;
    o.syscall_budget = budget;
    o.tgids = { static_cast<uint32_t>(getpid()) };
    return o;
}

// threads x iterations pairs of non-blocking semops on one set: a 1-sop
// call, then a 32-sop one that takes several times longer. A countdown fixed
// at an even period would time only one kind.
void alternatingSemops(unsigned threads, unsigned iterations)
{
    constexpr int kSems = 32;
    const int id = semget(IPC_PRIVATE, kSems, IPC_CREAT | 0600);
    if (id < 0)
        throw std::runtime_error(std::string("semget: ") + std::strerror(errno));
    std::vector<std::thread> pool;
    for (unsigned t = 0; t < threads; ++t)
        pool.emplace_back([=] {
            sembuf one { static_cast<unsigned short>(t % kSems), 0, IPC_NOWAIT };
            sembuf many[kSems];
            for (int k = 0; k < kSems; ++k)
                many[k] = { static_cast<unsigned short>(k), 0, IPC_NOWAIT };
            for (unsigned i = 0; i < iterations; ++i) {
                semop(id, &one, 1);
                semop(id, many, kSems);
            }
        });
    for (auto& t : pool)
        t.join();
    semctl(id, 0, IPC_RMID);
}

const LatencyRecord* find(const Snapshot& s, const std::string& name)
{
    for (const LatencyRecord& r : s.latencies)
        if (r.name == name)
            return &r;
    return nullptr;
}

double relative(uint64_t estimate, uint64_t exact)
{
    return exact ? std::fabs(static_cast<double>(estimate) / static_cast<double>(exact) - 1) : 0;
}

// Bounds, measured on this project's 2-CPU VM (bench/record/README.md) with
// 3-8% of the calls timed: the mean came out 7-12% high, nearly all of it the
// other session's program inside each timed interval (~40 ns on a ~450 ns
// call), the sampling error a few percent; the p99 in the same log2 bucket
// as the exact one or the next, which is the histogram's resolution (a 1%
// shift of calls across a bucket boundary moves it by a bucket). A biased
// sample (only one of the two alternating calls timed, or the rate's phases
// unweighted) is off by far more. The other session's program is a fixed
// cost, not a share: on a VM whose calls are short, timer_gettime takes
// ~330 ns and its estimate came out 13-55 ns high
// (4-17.5%) in six runs, semtimedop's (~870 ns) 0.2-6.3%. So the bound is
// 15% plus that one program run. Precisely: the budgeted interval holds the
// exact session's enter (two clock reads, a task-storage look-up), the
// exact one the budgeted session's mostly untimed exit (cheaper than the
// timed one it holds when both time every call: two such sessions differ
// by -33..+23 ns, so no ordering calibration takes this out); the
// difference came out 7-108 ns over 22 runs on that VM and 120 ns
// once in CI, on a semtimedop that ran at 357 ns instead of its usual
// 500-750. On that VM the two alternating semops differ by only ~150 ns
// (1.37 and 1.52 us each, timed from userspace), so this bound no longer
// tells a sample of one kind from a fair one there: the p99 check is the
// sharper one.
constexpr double kMeanBound = 0.15;
constexpr double kOtherProgramNs = 150;

bool sameOrNextBucket(uint64_t a, uint64_t b)
{
    const unsigned x = Log2Hist::bucketOf(a), y = Log2Hist::bucketOf(b);
    return (x > y ? x - y : y - x) <= 1;
}

TEST(SyscallBudget, EstimateMatchesExactTimingOfTheSameCalls)
{
    LOCKSCOPE_REQUIRE_ROOT();
    // Both sessions' programs run on every call, and each one's interval holds
    // part of the other's work: the budgeted one first, whose untimed exit
    // is the cheaper thing to hold.
    auto budgeted = Session::open(syscallsOnly(20000)); // record's default
    auto exact = Session::open(syscallsOnly(0));
    alternatingSemops(2, 60000);
    const uint64_t timers = test::timerCalls(100000);
    budgeted->detach();
    exact->detach();
    const Snapshot e = exact->snapshot(), b = budgeted->snapshot();
    EXPECT_EQ(e.stats.syscalls_untimed, 0u);
    uint64_t calls = 0;
    for (const LatencyRecord& r : e.latencies)
        calls += r.hist.count();
    EXPECT_GT(b.stats.syscalls_untimed, calls / 2) << "the budget did not bind";
    EXPECT_EQ(b.stats.lost, 0u);
    int compared = 0;
    for (const char* name : { "semtimedop", "semop", "timer_gettime" }) {
        const LatencyRecord* x = find(e, name);
        const LatencyRecord* y = find(b, name);
        ASSERT_TRUE(x && y) << name;
        EXPECT_EQ(y->hist.count(), x->hist.count()) << name << ": every call is counted, timed or not";
        EXPECT_EQ(y->errors, x->errors) << name;
        EXPECT_TRUE(y->hist.consistent()) << name;
        if (x->hist.count() < 20000)
            continue; // glibc sends semop() through one of semop and semtimedop
        ++compared;
        const double mean = relative(y->hist.mean(), x->hist.mean());
        std::printf("%s: %llu calls; mean %llu ns exact, %llu estimated (%.1f%%); p99 %llu ns exact, %llu "
                    "estimated\n",
            name, static_cast<unsigned long long>(x->hist.count()), static_cast<unsigned long long>(x->hist.mean()),
            static_cast<unsigned long long>(y->hist.mean()), mean * 100,
            static_cast<unsigned long long>(x->hist.percentile(99)),
            static_cast<unsigned long long>(y->hist.percentile(99)));
        const double exactMean = static_cast<double>(x->hist.mean());
        EXPECT_LE(mean * exactMean, kMeanBound * exactMean + kOtherProgramNs) << name << ": mean latency estimate off";
        EXPECT_TRUE(sameOrNextBucket(y->hist.percentile(99), x->hist.percentile(99)))
            << name << ": p99 latency estimate off";
    }
    EXPECT_GE(find(e, "timer_gettime")->hist.count(), timers);
    EXPECT_EQ(compared, 2) << "one semop syscall and timer_gettime";
}

} // namespace
} // namespace lockscope::probes
