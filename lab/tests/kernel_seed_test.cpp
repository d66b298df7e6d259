// SPDX-License-Identifier: GPL-2.0-or-later
// The seed pairs' shapes, asserted on real captures: each lab.seed.* fixture
// built Debian's linux-source-6.1 unpatched (baseline, the "after" state of
// the seed's upstream change) and with the seed's patch from
// samples/kernel-patches (the "before" state), and recorded the seed's
// workload on both. The checks read <dir>/base.lockscope.json and
// <dir>/patched.lockscope.json.
#include <algorithm>
#include <filesystem>
#include <initializer_list>
#include <map>
#include <sstream>
#include <string_view>
#include <utility>

#include <gtest/gtest.h>

#include "lockscope/capture/io.h"

namespace fs = std::filesystem;
using lockscope::Capture;
using lockscope::Lock;
using lockscope::Stack;

namespace {

Capture load(const std::string& dir, const std::string& name)
{
    auto path = fs::path(dir) / (name + ".lockscope.json");
    if (!fs::exists(path))
        throw std::runtime_error("the lab brought back no " + path.string() + " (see its test output and " +
                                 (fs::path(dir) / (name + ".serial.log")).string() + ")");
    return lockscope::readCapture(path.string());
}

std::string keysOf(const Capture& c)
{
    std::ostringstream s;
    for (const auto& l : c.locks)
        if (l.hold.count() + l.wait.count() > 0)
            s << "  " << l.key << " (" << l.type << ", " << l.instances << " instances, " << l.hold.count()
              << " holds)\n";
    return s.str();
}

// The spinlock every semop takes: by far the busiest spinlock while the
// workload runs (taken once per call). Found by its traffic, not its key:
// the key names a call site, which moves with inlining, and today holds
// whose stack was not walked (stack budget) take the key of whichever walked
// stack came first — the array lock was filed as spinlock@ipc_addid (semget's
// call) in one run and spinlock@__do_semtimedop in another (issue 14 item 5).
const Lock* busiestSpinlock(const Capture& c)
{
    const Lock* best = nullptr;
    for (const auto& l : c.locks) {
        if (l.type == "spinlock" && (!best || l.hold.count() > best->hold.count()))
            best = &l;
    }
    return best;
}

} // namespace

const Lock* findKey(const Capture& c, const std::string& key)
{
    for (const auto& l : c.locks)
        if (l.key == key)
            return &l;
    return nullptr;
}

uint64_t syscallCalls(const Capture& c, const std::string& name)
{
    for (const auto& s : c.syscalls)
        if (s.name == name)
            return s.calls();
    return 0;
}

double opsOf(const Capture& c) { return c.workload.results.value("ops", 0.0); }

bool hasFrame(const Stack& stack, std::initializer_list<std::string_view> parts)
{
    for (const auto& f : stack.frames)
        for (auto part : parts)
            if (f.function.str().find(part) != std::string::npos)
                return true;
    return false;
}

// 01-sem-lock-scope: the baseline locks each semaphore of the set (4 with
// --sems 4); the patched kernel takes the whole-array lock for every semop,
// so the semop spinlock folds into one instance, taken as often as before
// (once per semop). It is found on each side by its traffic (see
// busiestSpinlock: keys are not stable for it yet). Hold
// times barely move in a TCG guest (the global path's extra work is a few
// instructions when no complex operation is pending), so they are not
// asserted.
TEST(SeedShape, SemLockScopeFoldsPerSemaphoreLocksIntoTheArrayLock)
{
    auto base = load(LAB_SEED_SEM_LOCK_SCOPE, "base");
    auto patched = load(LAB_SEED_SEM_LOCK_SCOPE, "patched");
    const Lock* b = busiestSpinlock(base);
    const Lock* p = busiestSpinlock(patched);
    ASSERT_NE(b, nullptr) << "no semaphore spinlock in the baseline capture:\n" << keysOf(base);
    ASSERT_NE(p, nullptr) << "no semaphore spinlock in the patched capture:\n" << keysOf(patched);
    // 4 per-semaphore locks, plus the array lock itself when its semctl()
    // holds were filed under the same key (a lock address takes its busiest
    // walked caller's key: sem_lock, which semctl's path also calls).
    EXPECT_GE(b->instances, 4u) << b->key << " on the baseline: one lock per semaphore (--sems 4)";
    EXPECT_EQ(p->instances, 1u) << p->key << " on the patched kernel: the array lock only";
    for (const auto& [capture, lock] : {std::pair{&base, b}, std::pair{&patched, p}}) {
        auto ops = opsOf(*capture);
        ASSERT_GT(ops, 0.0) << capture->meta.label << ": the workload reported no ops";
        auto holds = static_cast<double>(lock->hold.count());
        EXPECT_GT(holds, 0.9 * ops) << capture->meta.label << ": " << lock->key << " is taken once per semop";
        EXPECT_LT(holds, 1.1 * ops) << capture->meta.label << ": " << lock->key << " is taken once per semop";
    }
}

#ifdef LAB_SEED_SEM_POSTWAIT
// The semaphore array's spinlock (the per-semaphore ones on the baseline):
// the busiest spinlock keyed by a System V semaphore call site. Not simply
// the busiest spinlock, because with sleepers the scheduler's rq lock is
// taken about as often. The key names the call site of the lock's first
// walked hold, which moves with inlining (sem_lock, __do_semtimedop) and is
// semget's ipc_addid when the set's creation was walked first.
const Lock* semaphoreLock(const Capture& c)
{
    const Lock* best = nullptr;
    for (const auto& l : c.locks) {
        const bool sem_site = l.key == "spinlock@sem_lock" || l.key == "spinlock@__do_semtimedop" ||
                              l.key == "spinlock@do_semtimedop" || l.key == "spinlock@ipc_addid";
        if (sem_site && (!best || l.hold.count() > best->hold.count()))
            best = &l;
    }
    return best;
}

// 02-sem-postwait: as in 01 the per-semaphore locks fold into the array
// lock; in addition every post on the patched kernel re-tries all 256
// sleepers queued on the array's one pending list and wakes its partner,
// all inside the critical section, so the lock's typical hold grows. The
// 90th percentile is compared, not the mean: TCG preempts a vCPU inside a
// critical section now and then (holds of ms on both kernels), which owns
// the means. Measured (single-threaded TCG, 2 vCPUs): p90 about
// 1 us -> 16 us, instances 92 -> 1.
TEST(SeedShape, SemPostwaitHoldsTheArrayLockLongerWithSleepers)
{
    auto base = load(LAB_SEED_SEM_POSTWAIT, "base");
    auto patched = load(LAB_SEED_SEM_POSTWAIT, "patched");
    const Lock* b = semaphoreLock(base);
    const Lock* p = semaphoreLock(patched);
    ASSERT_NE(b, nullptr) << "no semaphore spinlock in the baseline capture:\n" << keysOf(base);
    ASSERT_NE(p, nullptr) << "no semaphore spinlock in the patched capture:\n" << keysOf(patched);
    ASSERT_GT(b->hold.count(), 1000u) << b->key << ": too few holds on the baseline to compare";
    ASSERT_GT(p->hold.count(), 1000u) << p->key << ": too few holds on the patched kernel to compare";
    EXPECT_GE(b->instances, 2u) << b->key << " on the baseline: the ping-ponging pair's two semaphores at least";
    EXPECT_EQ(p->instances, 1u) << p->key << " on the patched kernel: the array lock only";
    const auto b90 = b->hold.percentile(90), p90 = p->hold.percentile(90);
    EXPECT_GE(p90, 4 * b90) << "hold p90 " << b90 << " ns (" << b->key << ", baseline) vs " << p90 << " ns ("
                            << p->key << ", patched): every post re-tries 256 sleepers under the lock";
}
#endif

#ifdef LAB_SEED_IPC_KEY_LOOKUP
struct SemgetSamples {
    uint64_t in_semget = 0; // on-CPU samples inside semget()
    uint64_t in_scan = 0;   // of those, inside the id walk (idr_find -> radix tree)
};

SemgetSamples semgetSamples(const Capture& c)
{
    std::map<uint32_t, const Stack*> stacks;
    for (const auto& s : c.stacks)
        stacks[s.id] = &s;
    SemgetSamples out;
    for (const auto& sc : c.cpu.stacks) {
        auto it = stacks.find(sc.stack_id);
        if (it == stacks.end() || !hasFrame(*it->second, {"semget"}))
            continue;
        out.in_semget += sc.count;
        // idr_find tail-calls radix_tree_lookup, so its own frame is often gone.
        if (hasFrame(*it->second, {"idr_find", "radix_tree_lookup"}))
            out.in_scan += sc.count;
    }
    return out;
}

// 03-ipc-key-lookup: no lock changes (one thread, an uncontended rwsem);
// the patched kernel finds a key by walking the ids with idr_find(), the
// baseline by one rhashtable lookup. Times per lookup are what the seed
// quotes, but in a TCG guest on a shared host they swing by 30x between
// boots (host load), so the test asserts where semget() spends its CPU
// instead: the on-CPU samples inside semget() that are in the id walk.
// Measured: baseline 1 of 658 semget samples, patched 48 of 178.
TEST(SeedShape, IpcKeyLookupWalksTheIdsInsideSemget)
{
    auto base = load(LAB_SEED_IPC_KEY_LOOKUP, "base");
    auto patched = load(LAB_SEED_IPC_KEY_LOOKUP, "patched");
    const auto b = semgetSamples(base), p = semgetSamples(patched);
    ASSERT_GE(b.in_semget, 50u) << "too few on-CPU samples inside semget on the baseline";
    ASSERT_GE(p.in_semget, 50u) << "too few on-CPU samples inside semget on the patched kernel";
    const double b_share = double(b.in_scan) / double(b.in_semget);
    const double p_share = double(p.in_scan) / double(p.in_semget);
    EXPECT_LT(b_share, 0.02) << b.in_scan << " of " << b.in_semget
                             << " baseline semget samples in idr_find: the baseline uses the rhashtable";
    EXPECT_GT(p_share, 0.10) << p.in_scan << " of " << p.in_semget
                             << " patched semget samples in idr_find: the walk over 1000 ids should show";
}

// The lookup time itself, against the key count, within one boot: the
// workload times its lookups per key count (the capture keeps its rows), and
// the ratio of the time per lookup at 1000 keys to that at 1 key cancels
// what swings between boots (host load moved a whole boot's lookups by up to
// 30x, and the share of semget calls lockscope timed at 16-128 us, asserted
// here before, from 0.6% to 2.2% on the baseline while the patched kernel
// gave 6.1-6.9%: 2.8x in one pair, too little to assert on). The baseline
// finds a key by one rhashtable lookup whatever the count, the patched kernel
// walks up to 1000 ids. Measured in three real pairs: baseline 1.0, 1.0, 1.0;
// patched 6.5, 10.9, 7.7. Under a host load of ~2.5 a CI run's baseline took
// 2.0x by the mean pass (its 1000-key row had 27 passes, one lookup of 8.7 ms
// in them) beside the patched kernel's 8.0x, so the median pass is read (the
// mean when a workload predates it), and the claim is the patched growth far
// above the baseline's, not a baseline of exactly 1.
double lookupGrowth(const Capture& c)
{
    std::map<int, double> perLookupUs;
    for (const auto& row : c.workload.results.value("rows", nlohmann::json::array())) {
        const int keys = row.value("keys", 0);
        const double passes = row.value("lookup_passes", 0.0);
        const double pass_us = row.value("lookup_median_us", row.value("lookup_total_us", 0.0));
        if (keys > 0 && passes > 0)
            perLookupUs[keys] = pass_us / keys;
    }
    if (!perLookupUs.count(1) || !perLookupUs.count(1000) || perLookupUs[1] <= 0)
        return 0;
    return perLookupUs[1000] / perLookupUs[1];
}

TEST(SeedShape, IpcKeyLookupGrowsWithTheKeyCountOnlyOnThePatchedKernel)
{
    const double b = lookupGrowth(load(LAB_SEED_IPC_KEY_LOOKUP, "base"));
    const double p = lookupGrowth(load(LAB_SEED_IPC_KEY_LOOKUP, "patched"));
    ASSERT_GT(b, 0) << "the baseline's semget-keys rows lack the 1- and 1000-key lookups";
    ASSERT_GT(p, 0) << "the patched kernel's semget-keys rows lack the 1- and 1000-key lookups";
    EXPECT_LT(b, 3.0) << "baseline: a lookup among 1000 keys takes " << b << "x one among 1 (rhashtable)";
    EXPECT_GT(p, 3.0) << "patched: a lookup among 1000 keys takes only " << p << "x one among 1 (the id walk)";
    EXPECT_GT(p, 2.5 * b) << "patched growth " << p << "x is not well above the baseline's " << b << "x";
}
#endif

#ifdef LAB_SEED_POSIX_TIMER_LOOKUP
// 04-posix-timer-lookup: 6.1 finds a timer by its id under RCU; the patched
// kernel takes the global hash_lock for every lookup, so a lock named by its
// symbol (KALLSYMS_ALL) appears, held once per timer_gettime(); on the
// baseline it is taken only when timers are created or deleted.
TEST(SeedShape, PosixTimerLookupTakesTheGlobalHashLockOnEveryCall)
{
    auto base = load(LAB_SEED_POSIX_TIMER_LOOKUP, "base");
    auto patched = load(LAB_SEED_POSIX_TIMER_LOOKUP, "patched");
    auto gettime_base = static_cast<double>(syscallCalls(base, "timer_gettime"));
    auto gettime_patched = static_cast<double>(syscallCalls(patched, "timer_gettime"));
    ASSERT_GT(gettime_base, 1000.0) << "the baseline recorded no timer_gettime calls";
    ASSERT_GT(gettime_patched, 1000.0) << "the patched kernel recorded no timer_gettime calls";
    const Lock* p = findKey(patched, "hash_lock");
    ASSERT_NE(p, nullptr) << "no hash_lock on the patched kernel:\n" << keysOf(patched);
    EXPECT_GT(static_cast<double>(p->hold.count()), 0.9 * gettime_patched);
    EXPECT_LT(static_cast<double>(p->hold.count()), 1.1 * gettime_patched);
    const Lock* b = findKey(base, "hash_lock");
    auto base_holds = b ? static_cast<double>(b->hold.count()) : 0.0;
    EXPECT_LT(base_holds, 0.01 * gettime_base) << "the baseline looks timers up without hash_lock";
}
#endif

#ifdef LAB_SEED_SEQLOCK_READERS
// Holds of rename_lock's spinlock from getcwd()'s path walk: each is a
// locking pass, taken after a lockless pass failed its sequence check.
uint64_t lockedPasses(const Capture& c)
{
    const lockscope::StackIndex stacks(c);
    uint64_t n = 0;
    for (const auto& l : c.locks) {
        if (l.key.rfind("rename_lock", 0) != 0)
            continue;
        for (const auto& site : l.sites)
            if (const Stack* s = stacks.find(site.stack_id); s && hasFrame(*s, {"prepend_path"}))
                n += site.hold.count();
    }
    return n;
}

// 05-seqlock-readers: a getcwd() whose lockless walk failed takes rename_lock
// on both kernels, but the patched one takes it as a writer and bumps the
// sequence, failing the walk the other vCPU's reader is in the middle of,
// which then locks too, and so on while each failed walk outlasts the
// other's locked pass. With depth-2000 paths (a getcwd() is mostly walk) on
// 2 tcg-multi vCPUs, in 5 pairs: baseline 0.43-0.53 locked passes per rename
// (the chance that a reader is inside a walk when a rename lands), patched
// 1.03-1.55 on a host loaded by other work, 0.60 vs 5.93 on an idle one;
// CPU in spin-lock functions 0.18-0.42% vs 0.86-1.97% (idle: 0.36 vs 2.63%).
TEST(SeedShape, SeqlockReadersLockedPassesMultiplyOnThePatchedKernel)
{
    auto perRename = [](const Capture& c, const char* side) {
        const double renames = c.workload.results.value("renames", 0.0);
        EXPECT_GT(renames, 200.0) << side << ": too few renames to judge (dpath-stress rows: "
                                  << c.workload.results.dump() << ")";
        return renames > 0 ? static_cast<double>(lockedPasses(c)) / renames : 0.0;
    };
    auto base = load(LAB_SEED_SEQLOCK_READERS, "base");
    auto patched = load(LAB_SEED_SEQLOCK_READERS, "patched");
    const double b = perRename(base, "baseline"), p = perRename(patched, "patched");
    ASSERT_GT(lockedPasses(base), 50u) << "no locking getcwd passes on the baseline:\n" << keysOf(base);
    EXPECT_GT(p, 1.6 * b) << "locked getcwd passes per rename: baseline " << b << ", patched " << p
                          << ": a locking reader that writes should fail the other reader's walk (CPU in "
                          << "spin-lock functions " << 100 * base.cpu.lockShare() << "% vs "
                          << 100 * patched.cpu.lockShare() << "%)";
}
#endif
