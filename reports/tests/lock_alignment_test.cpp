// SPDX-License-Identifier: GPL-2.0-or-later
#include <gtest/gtest.h>

#include <algorithm>

#include "lockscope/capture/io.h"
#include "lockscope/reports/compare.h"
#include "lockscope/reports/input.h"
#include "lockscope/reports/judge.h"
#include "lockscope/reports/render.h"
#include "test_support.h"

// A lock is keyed by its hottest walked caller, so the sem array lock, taken
// by semop's and semctl's paths, is "spinlock@__do_semtimedop" in a run where
// semop's waits lead and "spinlock@semctl_main" where semctl's do. The
// comparison must read it as one lock, and must not join locks that are not
// plainly the same.
namespace {
using namespace lockscope;
using namespace lockscope::reports;
using test::makeLock;
using test::findLock;
using test::makeStack;

const std::string kSemop = "spinlock@__do_semtimedop";
const std::string kSemctl = "spinlock@semctl_main";

// The lock's site on each of the given stacks, n waits each.
Lock lockOn(const std::string& key, const std::vector<std::pair<uint32_t, uint64_t>>& sites, uint64_t seed)
{
    Lock l;
    for (const auto& [stack, n] : sites) {
        Lock one = makeLock(key, stack, n, 5000, seed++);
        if (l.sites.empty())
            l = one;
        else {
            l.wait.merge(one.wait);
            l.sites.push_back(one.sites.front());
        }
    }
    return l;
}

// Stacks 1 (semop's path), 2 (semctl's, a compiler clone by name) and 3 (another caller).
Capture run(std::vector<Lock> locks)
{
    Capture c;
    c.meta.kernel_release = "6.18.0";
    c.meta.duration_s = 10;
    c.stacks.push_back(makeStack(1, {"__do_semtimedop", "do_semtimedop", "__x64_sys_semtimedop"}));
    c.stacks.push_back(makeStack(2, {"semctl_main.constprop.0", "ksys_semctl", "__x64_sys_semctl"}));
    c.stacks.push_back(makeStack(3, {"ksys_msgsnd", "do_msgsnd"}));
    for (auto& l : locks)
        c.stats.events += l.wait.count();
    c.locks = std::move(locks);
    return c;
}

// The sem array lock, keyed by whichever of its two callers is hotter in the
// run; `scale` multiplies its waits.
Capture semRun(bool semctlHotter, uint64_t seed, uint64_t scale = 1)
{
    const uint64_t semop = semctlHotter ? 900 : 1000, semctl = semctlHotter ? 1000 : 900;
    return run({lockOn(semctlHotter ? kSemctl : kSemop, {{1, semop * scale}, {2, semctl * scale}}, seed)});
}

std::vector<std::string> keys(const Comparison& c)
{
    std::vector<std::string> out;
    for (const auto& l : c.locks)
        out.push_back(l.key);
    std::sort(out.begin(), out.end());
    return out;
}

bool hasNote(const Comparison& c, const std::string& part)
{
    return std::any_of(c.notes.begin(), c.notes.end(),
                       [&](const std::string& n) { return n.find(part) != std::string::npos; });
}

std::vector<std::string> written(const std::vector<Capture>& runs, const std::string& prefix)
{
    std::vector<std::string> paths;
    for (size_t i = 0; i < runs.size(); ++i) {
        paths.push_back(test::artifactDir() + "/" + prefix + "-" + std::to_string(i) + ".lockscope.json");
        writeCapture(runs[i], paths.back());
    }
    return paths;
}
} // namespace

TEST(LockAlignment, ALockKeyedByItsOtherCallerIsOneRow)
{
    const Comparison c = compare(semRun(false, 1), semRun(true, 2));
    ASSERT_EQ(keys(c), std::vector<std::string>{kSemop});
    const LockDelta& l = c.locks.front();
    EXPECT_EQ(l.presence, Presence::Both);
    EXPECT_EQ(l.also_keyed, std::vector<std::string>{kSemctl});
    EXPECT_EQ(l.contentions.before, 1900.0);
    EXPECT_EQ(l.contentions.after, 1900.0);
    EXPECT_TRUE(hasNote(c, "after: " + kSemctl + " compared as " + kSemop)) << testing::PrintToString(c.notes);
    EXPECT_NE(render(c, Format::Text).find("note: after: " + kSemctl + " compared as " + kSemop),
              std::string::npos);
    EXPECT_NE(render(c, Format::Json).find("\"also_keyed\": [\"" + kSemctl + "\"]"),
              std::string::npos)
        << render(c, Format::Json).substr(0, 2000);
}

TEST(LockAlignment, LocksThatAreNotPlainlyTheSameStayApart)
{
    // semctl's lock never walked from semop's path: it may be another lock.
    Capture semctlOnly = run({lockOn(kSemctl, {{2, 1000}}, 3)});
    Comparison c = compare(semRun(false, 1), semctlOnly);
    EXPECT_EQ(keys(c), (std::vector<std::string>{kSemop, kSemctl}));
    EXPECT_TRUE(c.notes.empty()) << testing::PrintToString(c.notes);

    // Nor the other way: semop's lock never walked from semctl's path.
    c = compare(run({lockOn(kSemop, {{1, 1000}}, 8)}), semRun(true, 9));
    EXPECT_EQ(keys(c), (std::vector<std::string>{kSemop, kSemctl}));

    // Both keys in the after run: two locks there, each keyed as it is.
    Capture both = run({lockOn(kSemop, {{1, 1000}}, 4), lockOn(kSemctl, {{2, 1000}, {1, 10}}, 5)});
    c = compare(semRun(false, 1), both);
    EXPECT_EQ(c.locks.size(), 2U);
    EXPECT_EQ(findLock(c, kSemctl).presence, Presence::OnlyAfter);

    // Another type, or another partition (record --per-cgroup), is another lock.
    Capture mutex = semRun(true, 6);
    mutex.locks.front().key = "mutex@semctl_main";
    EXPECT_EQ(compare(semRun(false, 1), mutex).locks.size(), 2U);
    Capture cgroupA = semRun(false, 1), cgroupB = semRun(true, 7);
    cgroupA.locks.front().key = kSemop + "#/sys/fs/cgroup/a";
    cgroupB.locks.front().key = kSemctl + "#/sys/fs/cgroup/b";
    EXPECT_EQ(compare(cgroupA, cgroupB).locks.size(), 2U);
    cgroupB.locks.front().key = kSemctl + "#/sys/fs/cgroup/a";
    EXPECT_EQ(keys(compare(cgroupA, cgroupB)), std::vector<std::string>{cgroupA.locks.front().key});
}

TEST(LockAlignment, AnAmbiguousMatchIsLeftApart)
{
    // The after lock's callers take two locks of the before run.
    const Capture before = run({lockOn(kSemop, {{1, 1000}, {3, 50}}, 1), lockOn(kSemctl, {{2, 1000}, {3, 50}}, 2)});
    const Capture after = run({lockOn("spinlock@ksys_msgsnd", {{3, 1000}, {1, 900}, {2, 900}}, 3)});
    EXPECT_EQ(compare(before, after).locks.size(), 3U);

    // Two after locks fit the one before lock.
    const Capture two = run({lockOn(kSemctl, {{2, 1000}, {1, 900}}, 4),
                             lockOn("spinlock@ksys_msgsnd", {{3, 1000}, {1, 900}}, 5)});
    const Capture one = run({lockOn(kSemop, {{1, 1000}, {2, 900}, {3, 900}}, 6)});
    EXPECT_EQ(compare(one, two).locks.size(), 3U);
}

TEST(LockAlignment, RunsWhoseKeysFlipAreOneLockInEveryRun)
{
    const std::vector<Capture> before{semRun(false, 1), semRun(true, 2), semRun(false, 3)};
    const std::vector<Capture> after{semRun(true, 4), semRun(true, 5), semRun(true, 6)};
    const Comparison c = compareSets(before, after);
    ASSERT_EQ(keys(c), std::vector<std::string>{kSemop});
    const LockDelta& l = c.locks.front();
    EXPECT_EQ(l.contentions.before, 1900.0); // a run's mean
    EXPECT_EQ(l.contentions.after, 1900.0);
    // Every run has its waits: no run of zeros to read as variance.
    const auto rate = std::find_if(l.runs.begin(), l.runs.end(), [](const MetricDelta& m) { return m.name == "contentions/s"; });
    ASSERT_NE(rate, l.runs.end());
    for (const RunSummary& side : { rate->before_runs, rate->after_runs }) {
        EXPECT_EQ(side.n, 3U);
        EXPECT_EQ(side.min, 190.0);
        EXPECT_EQ(side.max, 190.0);
    }
    EXPECT_TRUE(hasNote(c, "before (1 of 3 runs): " + kSemctl + " compared as " + kSemop));
    EXPECT_TRUE(hasNote(c, "after (3 of 3 runs): " + kSemctl + " compared as " + kSemop));

    // Read from files and folded as read, the same comparison.
    const auto b = written(before, "flip-b"), a = written(after, "flip-a");
    EXPECT_EQ(render(compareSetFiles(b, a), Format::Json), render(c, Format::Json));
    // The inputs themselves are not changed.
    EXPECT_EQ(before[1].locks.front().key, kSemctl);
}

TEST(LockAlignment, ABisectFindsItsLockUnderEitherKey)
{
    // The good set's first run keys the lock by semctl's path, so the
    // comparison's row is kSemctl; the bisect asked for kSemop.
    const std::vector<Capture> good{semRun(true, 1), semRun(false, 2), semRun(false, 3)};
    const std::vector<Capture> bad{semRun(false, 4, 5), semRun(false, 5, 5), semRun(false, 6, 5)};
    ASSERT_EQ(keys(compareSets(good, bad)), std::vector<std::string>{kSemctl});
    JudgeTarget target{kSemop, "total_wait"};
    EXPECT_EQ(endpointChange(good, bad, target, {}).change, Change::Up);
    EXPECT_EQ(target.lock, kSemop);
}

// Six host runs of one workload on one kernel (`contend-workload semctl 1 2`:
// one semop thread and one semctl(GETALL) thread on one array, `record
// --no-cpu --no-syscalls`): semop's and semctl's waits on the array lock are
// near-tied, and the lock is keyed by semctl in runs 1, 2 and 4 and by semop
// in runs 3, 5 and 6. An A/A comparison: one row for the lock, and no verdict.
TEST(LockAlignment, RealRunsOfANearTieAreOneLockAndNoChange)
{
    std::vector<std::string> b, a;
    for (int i = 1; i <= 6; ++i)
        (i <= 3 ? b : a).push_back(test::testdata("fixtures/semctl-near-tie/run" + std::to_string(i) + ".lockscope.json"));
    const auto [before, after] = loadSets(b, a);
    ASSERT_EQ(before[2].locks.front().key, kSemop) << "the fixture's premise: run 3 is keyed by semop";
    const Comparison c = compareSets(before, after);
    const LockDelta& l = findLock(c, kSemctl);
    EXPECT_EQ(l.also_keyed, std::vector<std::string>{kSemop});
    EXPECT_EQ(std::count_if(c.locks.begin(), c.locks.end(), [](const LockDelta& x) { return x.key == kSemop; }), 0);
    EXPECT_EQ(l.presence, Presence::Both);
    EXPECT_FALSE(l.judgement.decided()) << toString(l.judgement.verdict);
    const auto wait = std::find_if(l.runs.begin(), l.runs.end(), [](const MetricDelta& m) { return m.name == "total wait/s"; });
    ASSERT_NE(wait, l.runs.end());
    for (const RunSummary& side : { wait->before_runs, wait->after_runs }) {
        EXPECT_EQ(side.n, 3U);
        EXPECT_GT(side.min, 0.0) << "a run without the lock's waits";
    }
    EXPECT_TRUE(hasNote(c, "before (1 of 3 runs): " + kSemop + " compared as " + kSemctl));
    EXPECT_TRUE(hasNote(c, "after (2 of 3 runs): " + kSemop + " compared as " + kSemctl));
    EXPECT_EQ(render(compareSetFiles(b, a), Format::Json), render(c, Format::Json));
}
