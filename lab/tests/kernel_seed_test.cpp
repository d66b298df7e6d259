// SPDX-License-Identifier: GPL-2.0-or-later
// The seed pairs' shapes, asserted on real captures: each lab.seed.* fixture
// built Debian's linux-source-6.1 unpatched (baseline, the "after" state of
// the seed's upstream change) and with the seed's patch from
// samples/kernel-patches (the "before" state), and recorded the seed's
// workload on both. The checks read <dir>/base.lockscope.json and
// <dir>/patched.lockscope.json.
#include <filesystem>
#include <sstream>

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

const Lock* findKey(const Capture& c, const std::string& key)
{
    for (const auto& l : c.locks)
        if (l.key == key)
            return &l;
    return nullptr;
}

// The spinlock semop takes: the busiest spinlock whose key names a
// semaphore function (its call site is inside do_semtimedop on 6.1).
const Lock* semopSpinlock(const Capture& c)
{
    const Lock* best = nullptr;
    for (const auto& l : c.locks) {
        if (l.type != "spinlock" || l.key.find("sem") == std::string::npos)
            continue;
        if (!best || l.hold.count() > best->hold.count())
            best = &l;
    }
    return best;
}

} // namespace

// 01-sem-lock-scope: the baseline locks each semaphore of the set (4 with
// --sems 4); the patched kernel takes the whole-array lock for every semop,
// so the same key folds into one instance, held longer (complexmode_enter
// and the queue merging now run under it).
TEST(SeedShape, SemLockScopeFoldsPerSemaphoreLocksIntoTheArrayLock)
{
    auto base = load(LAB_SEED_SEM_LOCK_SCOPE, "base");
    auto patched = load(LAB_SEED_SEM_LOCK_SCOPE, "patched");
    const Lock* b = semopSpinlock(base);
    ASSERT_NE(b, nullptr) << "no semaphore spinlock in the baseline capture:\n" << keysOf(base);
    const Lock* p = findKey(patched, b->key);
    ASSERT_NE(p, nullptr) << "the baseline's " << b->key << " is not in the patched capture:\n" << keysOf(patched);
    EXPECT_GE(b->instances, 4u) << b->key << " on the baseline: one lock per semaphore expected";
    EXPECT_EQ(p->instances, 1u) << b->key << " on the patched kernel: the array lock only";
    EXPECT_GT(p->hold.mean(), b->hold.mean())
        << "mean hold of " << b->key << ": baseline " << b->hold.mean() << " ns, patched " << p->hold.mean() << " ns";
    // Same workload, so about the same number of acquisitions.
    EXPECT_LT(p->hold.count(), 3 * b->hold.count());
    EXPECT_LT(b->hold.count(), 3 * p->hold.count());
}
