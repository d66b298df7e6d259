// SPDX-License-Identifier: GPL-2.0-or-later
// The seed pairs' shapes, asserted on real captures: each lab.seed.* fixture
// built Debian's linux-source-6.1 unpatched (baseline, the "after" state of
// the seed's upstream change) and with the seed's patch from
// samples/kernel-patches (the "before" state), and recorded the seed's
// workload on both. The checks read <dir>/base.lockscope.json and
// <dir>/patched.lockscope.json.
#include <filesystem>
#include <sstream>
#include <utility>

#include <gtest/gtest.h>

#include "lockscope/capture/io.h"

namespace fs = std::filesystem;
using lockscope::Capture;
using lockscope::Lock;

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
    EXPECT_EQ(b->instances, 4u) << b->key << " on the baseline: one lock per semaphore (--sems 4)";
    EXPECT_EQ(p->instances, 1u) << p->key << " on the patched kernel: the array lock only";
    for (const auto& [capture, lock] : {std::pair{&base, b}, std::pair{&patched, p}}) {
        auto ops = opsOf(*capture);
        ASSERT_GT(ops, 0.0) << capture->meta.label << ": the workload reported no ops";
        auto holds = static_cast<double>(lock->hold.count());
        EXPECT_GT(holds, 0.9 * ops) << capture->meta.label << ": " << lock->key << " is taken once per semop";
        EXPECT_LT(holds, 1.1 * ops) << capture->meta.label << ": " << lock->key << " is taken once per semop";
    }
}

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
