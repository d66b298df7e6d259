// SPDX-License-Identifier: GPL-2.0-or-later
// Checks on the lab.acquire_2vcpu fixture: two threads hammering one
// semaphore array's spinlock on 2 vCPUs (tcg-multi: a host thread each),
// recorded with the hold probe. There a lone waiter spins on the qspinlock
// pending bit and lock:contention_begin never fires, so the tracepoint sees
// (almost) no spinning waits; the hold probe's acquire times, from each lock
// call's entry to its return, must show the contention.
#include <filesystem>
#include <sstream>

#include <gtest/gtest.h>

#include "lockscope/capture/io.h"

namespace fs = std::filesystem;
using lockscope::Capture;
using lockscope::Lock;

namespace {

// Two threads doing nothing but semops on one array for 2 s of guest time.
constexpr uint64_t kMinSlowAcquires = 20;

Capture load()
{
    const auto path = fs::path(LAB_ACQUIRE_DIR) / "guest.lockscope.json";
    if (!fs::exists(path))
        throw std::runtime_error("lab.acquire_2vcpu brought back no " + path.string() + " (see its output and " +
                                 (fs::path(LAB_ACQUIRE_DIR) / "guest.serial.log").string() + ")");
    return lockscope::readCapture(path.string());
}

// The semaphore array's lock: the spinlock with the most holds.
const Lock* busiestSpinlock(const Capture& c)
{
    const Lock* best = nullptr;
    for (const auto& l : c.locks)
        if (l.type == "spinlock" && (!best || l.hold.count() > best->hold.count()))
            best = &l;
    return best;
}

std::string table(const Capture& c)
{
    std::ostringstream s;
    for (const auto& l : c.locks)
        if (l.type == "spinlock")
            s << "  " << l.key << ": " << l.hold.count() << " holds, " << l.wait.count() << " waits, "
              << l.acquire.count() << " slow acquires\n";
    return s.str();
}

} // namespace

TEST(KernelAcquire, SpinAcquisitionsShowTheContentionTheTracepointMisses)
{
    const Capture c = load();
    EXPECT_EQ(c.meta.virtualization.kind, "tcg-multi");
    EXPECT_EQ(c.meta.virtualization.vcpus, 2u);
    EXPECT_EQ(c.meta.filters.count("acquire_min_ns"), 1u);
    const Lock* sem = busiestSpinlock(c);
    ASSERT_NE(sem, nullptr) << "no spinlock held at all:\n" << table(c);
    ASSERT_GT(sem->hold.count(), 1000u) << table(c);
    EXPECT_GE(sem->acquire.count(), kMinSlowAcquires) << "the two semop threads contend the array lock:\n"
                                                          << table(c);
    EXPECT_GT(sem->acquire.count(), 4 * sem->wait.count())
        << "with 2 vCPUs the tracepoint should miss most spinning waits:\n" << table(c);
    EXPECT_TRUE(sem->acquire.consistent());
    uint64_t sites = 0;
    for (const auto& s : sem->sites)
        sites += s.acquire.count();
    EXPECT_EQ(sites, sem->acquire.count()) << "the lock's acquire histogram is its sites'";
}
