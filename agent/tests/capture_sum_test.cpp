// SPDX-License-Identifier: GPL-2.0-or-later
#include <gtest/gtest.h>

#include "lockscope/agent/capture_sum.h"

namespace lockscope::agent {
namespace {

// A capture of one interval: one lock with one site per stack given (the
// stacks' ids differ from capture to capture, as each read-out numbers its own).
Capture slice(const std::vector<std::string>& leafs, uint32_t firstId, uint64_t waitNs, double seconds)
{
    Capture c;
    c.meta.duration_s = seconds;
    c.meta.start_time = "2026-12-03T08:00:00Z";
    Lock l;
    l.key = "spinlock@sem_lock";
    l.type = "spinlock";
    for (size_t i = 0; i < leafs.size(); ++i) {
        const uint32_t id = firstId + uint32_t(i);
        c.stacks.push_back(Stack{id, StackKind::Kernel, {Frame{leafs[i], 4, "", {}}, Frame{"do_semtimedop", 8, "", {}}}});
        LockSite site;
        site.stack_id = id;
        site.wait.add(waitNs);
        l.wait.add(waitNs);
        l.sites.push_back(site);
    }
    c.locks.push_back(l);
    c.stats.events = leafs.size();
    c.cpu.samples = 10;
    c.cpu.lock_samples = 3;
    return c;
}

TEST(CaptureSum, MergesLocksAndSitesByWhatTheStacksSay)
{
    CaptureSum sum;
    sum.add(slice({"sem_lock", "ipc_lock"}, 7, 1000, 1.0));
    sum.add(slice({"ipc_lock", "other_fn"}, 100, 3000, 2.0));
    const Capture& c = sum.capture();
    ASSERT_EQ(c.locks.size(), 1u);
    EXPECT_EQ(c.locks[0].wait.count(), 4u);
    EXPECT_EQ(c.locks[0].wait.total(), 8000u);
    EXPECT_EQ(c.locks[0].sites.size(), 3u) << "ipc_lock's site merged across the two intervals";
    EXPECT_EQ(c.stacks.size(), 3u);
    EXPECT_DOUBLE_EQ(c.meta.duration_s, 3.0);
    EXPECT_EQ(c.stats.events, 4u);
    EXPECT_EQ(c.cpu.samples, 20u);
    EXPECT_EQ(c.cpu.lock_samples, 6u);
    for (const LockSite& s : c.locks[0].sites)
        EXPECT_NE(c.findStack(s.stack_id), nullptr);
    EXPECT_EQ(sum.intervals(), 2u);
}

TEST(CaptureSum, StackTableIsBoundedAndSaysSo)
{
    CaptureSum sum(SumLimits{2, 10});
    sum.add(slice({"f1", "f2", "f3", "f4"}, 1, 1000, 1.0));
    const Capture& c = sum.capture();
    EXPECT_EQ(c.stacks.size(), 3u) << "two kept, one for the rest";
    EXPECT_EQ(sum.stacksNotKept(), 2u);
    EXPECT_EQ(c.locks[0].wait.count(), 4u) << "the waits stay counted";
    const Stack* full = c.findStack(c.locks[0].sites.back().stack_id);
    ASSERT_NE(full, nullptr);
    EXPECT_EQ(full->frames[0].function, kStackTableFullFrame);
}

TEST(CaptureSum, LockTableIsBounded)
{
    CaptureSum sum(SumLimits{100, 1});
    Capture a = slice({"f"}, 1, 1000, 1.0);
    Capture b = a;
    b.locks[0].key = "mutex@other";
    sum.add(a);
    sum.add(b);
    ASSERT_EQ(sum.capture().locks.size(), 2u);
    EXPECT_EQ(sum.capture().locks[1].key, kOtherLocksKey);
    EXPECT_EQ(sum.locksFolded(), 1u);
}

} // namespace
} // namespace lockscope::agent

namespace lockscope::agent {
namespace {

TEST(CaptureSum, CpuStacksCanBeLeftOut)
{
    Capture a = slice({"f"}, 1, 1000, 1.0);
    a.stacks.push_back(Stack{9, StackKind::Kernel, {Frame{"cpu_leaf", 0, "", {}}}});
    a.cpu.stacks.push_back({9, 5});
    CaptureSum with, without(SumLimits{100, 10, false});
    with.add(a);
    without.add(a);
    EXPECT_EQ(with.capture().cpu.stacks.size(), 1u);
    EXPECT_TRUE(without.capture().cpu.stacks.empty());
    EXPECT_EQ(without.capture().cpu.samples, 10u) << "the totals stay";
    EXPECT_EQ(without.capture().stacks.size(), 1u) << "only the lock site's stack";
}

} // namespace
} // namespace lockscope::agent
