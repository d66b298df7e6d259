// SPDX-License-Identifier: GPL-2.0-or-later
#include <gtest/gtest.h>

#include "lockscope/agent/capture_sum.h"
#include "lockscope/capture/tail_basis.h"

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

// A profile request spanning windows with and without the part-time wait
// programs: the share of its time they were attached, and no exact tail.
TEST(CaptureSum, WaitShareIsTheIntervalsWeightedByDuration)
{
    CaptureSum sum;
    Capture whole = slice({"f"}, 1, 1000, 6.0);
    whole.meta.filters["exact_wait_ns"] = "8388608";
    Capture sampled = slice({"f"}, 1, 1000, 2.0);
    markWaitsSampled(sampled.meta, 0.25);
    sum.add(whole);
    EXPECT_EQ(waitShare(sum.totals().meta), 1.0);
    EXPECT_EQ(exactWaitNs(sum.totals().meta), 8388608u);
    sum.add(sampled);
    EXPECT_NEAR(waitShare(sum.totals().meta), (6 + 0.25 * 2) / 8, 1e-4);
    EXPECT_EQ(exactWaitNs(sum.totals().meta), 0u);
    sum.add(whole);
    EXPECT_NEAR(waitShare(sum.totals().meta), (12 + 0.25 * 2) / 14, 1e-4);
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

// slice() with an owner on its first site: a task at a stack of its own.
Capture withOwner(uint32_t firstId, uint32_t ownerTid, const std::string& ownerLeaf, uint64_t waits, uint64_t ns)
{
    Capture c = slice({"__mutex_lock"}, firstId, ns, 1.0);
    const uint32_t ownerStack = firstId + 50;
    c.stacks.push_back(Stack{ownerStack, StackKind::Kernel, {Frame{ownerLeaf, 0, "", {}}, Frame{"ksys_read", 8, "", {}}}});
    c.locks[0].sites[0].holders.push_back(Holder(ownerStack, waits, ns, ownerTid, "worker"));
    return c;
}

TEST(CaptureSum, OwnersAddUpByStackAndTask)
{
    CaptureSum sum;
    sum.add(withOwner(1, 42, "filemap_read", 3, 3000));
    sum.add(withOwner(200, 42, "filemap_read", 2, 5000)); // the same owner, stack ids renumbered
    sum.add(withOwner(400, 43, "filemap_read", 1, 100));
    const Capture c = sum.capture();
    ASSERT_EQ(c.locks.size(), 1u);
    ASSERT_EQ(c.locks[0].sites.size(), 1u);
    const auto& holders = c.locks[0].sites[0].holders;
    ASSERT_EQ(holders.size(), 2u);
    EXPECT_EQ(holders[0].owner_tid, 42u) << "by wait time, most first";
    EXPECT_EQ(holders[0].count, 5u);
    EXPECT_EQ(holders[0].wait_ns, 8000u);
    EXPECT_EQ(holders[0].owner_comm, "worker");
    const Stack* s = c.findStack(holders[0].stack_id);
    ASSERT_NE(s, nullptr) << "the owner's stack is in the capture";
    EXPECT_EQ(s->frames[0].function, "filemap_read");
    EXPECT_EQ(holders[1].owner_tid, 43u);
}

// --holder-stacks: a spinlock's holders are stacks without a task; the same
// holder stack from two windows (its ids renumbered) is one holder.
TEST(CaptureSum, SpinlockHoldersAddUpByStack)
{
    auto withHolder = [](uint32_t firstId, const std::string& holderLeaf, uint64_t waits, uint64_t ns) {
        Capture c = slice({"_raw_spin_lock"}, firstId, ns, 1.0);
        const uint32_t holderStack = firstId + 50;
        c.stacks.push_back(Stack{holderStack, StackKind::Kernel, {Frame{holderLeaf, 0, "", {}}}});
        c.locks[0].sites[0].holders.push_back(Holder(holderStack, waits, ns));
        return c;
    };
    CaptureSum sum;
    sum.add(withHolder(1, "do_semtimedop", 4, 400));
    sum.add(withHolder(300, "do_semtimedop", 6, 900));
    sum.add(withHolder(600, "freeary", 1, 50));
    const Capture c = sum.capture();
    const auto& holders = c.locks.at(0).sites.at(0).holders;
    ASSERT_EQ(holders.size(), 2u);
    EXPECT_FALSE(holders[0].owner_tid);
    EXPECT_EQ(holders[0].count, 10u);
    EXPECT_EQ(holders[0].wait_ns, 1300u);
    EXPECT_EQ(holders[1].count, 1u);
}

TEST(CaptureSum, OwnersAreBoundedAndSaySo)
{
    SumLimits limits;
    limits.max_owners = 1;
    CaptureSum sum(limits);
    sum.add(withOwner(1, 42, "filemap_read", 3, 3000));
    sum.add(withOwner(100, 43, "filemap_read", 1, 100));
    sum.add(withOwner(200, 44, "filemap_read", 2, 200));
    const Capture c = sum.capture();
    const auto& holders = c.locks[0].sites[0].holders;
    ASSERT_EQ(holders.size(), 2u);
    EXPECT_EQ(sum.ownersFolded(), 2u);
    EXPECT_EQ(holders[1].count, 3u) << "the refused owners' waits stay counted";
    EXPECT_FALSE(holders[1].owner_tid);
    const Stack* s = c.findStack(holders[1].stack_id);
    ASSERT_NE(s, nullptr);
    EXPECT_EQ(s->frames[0].function, kOwnersNotKeptFrame);
}

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

namespace lockscope::agent {
namespace {

Log2Hist hist(std::initializer_list<uint64_t> values)
{
    Log2Hist h;
    for (uint64_t v : values)
        h.add(v);
    return h;
}

// Stacks come back frame for frame, each frame's first-seen address kept;
// the same frames in another order are another stack, a full table refuses.
TEST(StackTable, InternsStacksAndGivesThemBack)
{
    StackTable t(2);
    const Stack a{5, StackKind::Kernel, {Frame{"_raw_spin_lock", 4, "", 0xffff1}, Frame{"do_semtimedop", 8, "", {}}}};
    Stack sameFrames = a;
    sameFrames.id = 9;
    sameFrames.frames[0].address = 0xffff2;
    Stack reversed = a;
    std::swap(reversed.frames[0], reversed.frames[1]);
    const Stack user{1, StackKind::User, {Frame{"main", 0, "/usr/bin/semop-multi", {}}}};
    const auto ia = t.intern(a);
    ASSERT_TRUE(ia);
    EXPECT_EQ(t.intern(sameFrames), ia) << "the address is not part of what a frame says";
    const auto ir = t.intern(reversed);
    ASSERT_TRUE(ir);
    EXPECT_NE(*ir, *ia);
    EXPECT_FALSE(t.intern(user)) << "two stacks fill a table of two";
    EXPECT_EQ(t.size(), 2u);
    const Stack back = t.stack(*ia);
    EXPECT_EQ(back.id, *ia);
    EXPECT_EQ(back.kind, StackKind::Kernel);
    EXPECT_EQ(back.frames, a.frames);
    EXPECT_EQ(t.stack(*ir).frames, reversed.frames);
    const auto iu = t.intern(user, true);
    ASSERT_TRUE(iu);
    EXPECT_EQ(t.stack(*iu).kind, StackKind::User);
    EXPECT_EQ(t.stack(*iu).frames, user.frames);
}

// Sites keep their user stacks apart and come back with full histograms.
TEST(CaptureSum, SitesKeepTheirUserStackAndHistograms)
{
    Capture a = slice({"f"}, 1, 1000, 1.0);
    a.stacks.push_back(Stack{50, StackKind::User, {Frame{"main", 16, "/bin/x", {}}}});
    LockSite withUser = a.locks[0].sites[0];
    withUser.user_stack_id = 50;
    withUser.hold.add(77);
    a.locks[0].sites.push_back(withUser);
    CaptureSum sum;
    sum.add(a);
    sum.add(a);
    const Capture c = sum.capture();
    ASSERT_EQ(c.locks[0].sites.size(), 2u);
    const LockSite& plain = c.locks[0].sites[0];
    const LockSite& user = c.locks[0].sites[1];
    EXPECT_EQ(plain.stack_id, user.stack_id);
    EXPECT_FALSE(plain.user_stack_id);
    ASSERT_TRUE(user.user_stack_id);
    EXPECT_EQ(c.findStack(*user.user_stack_id)->kind, StackKind::User);
    EXPECT_EQ(user.hold, hist({77, 77}));
    EXPECT_EQ(plain.wait, hist({1000, 1000}));
    EXPECT_TRUE(plain.hold.empty());
    EXPECT_TRUE(sum.totals().stacks.empty()) << "the totals carry no stacks";
    EXPECT_TRUE(sum.totals().locks[0].sites.empty());
}

} // namespace
} // namespace lockscope::agent

namespace lockscope::agent {
namespace {

// A lock taken in a timer interrupt: what the interrupt came upon differs
// from one wait to the next; the sum since start keeps one site for it.
TEST(CaptureSum, FoldsWhatAnInterruptInterrupted)
{
    auto irqSlice = [](const char* interrupted, uint32_t offset) {
        Capture c = slice({"f"}, 1, 1000, 1.0);
        c.stacks[0].frames = {Frame{"try_to_wake_up", 4, "", {}}, Frame{"asm_sysvec_apic_timer_interrupt", 26, "", {}},
                              Frame{interrupted, offset, "", {}}, Frame{"do_syscall_64", 90, "", {}}};
        return c;
    };
    CaptureSum folded(SumLimits{.fold_interrupted = true}), kept;
    for (auto* s : {&folded, &kept}) {
        s->add(irqSlice("ipcperms", 12));
        s->add(irqSlice("__do_semtimedop", 300));
    }
    const Capture f = folded.capture();
    ASSERT_EQ(f.locks[0].sites.size(), 1u);
    EXPECT_EQ(f.locks[0].sites[0].wait.count(), 2u);
    const std::vector<Frame> want{Frame{"try_to_wake_up", 4, "", {}},
                                  Frame{"asm_sysvec_apic_timer_interrupt", 26, "", {}},
                                  Frame{kInterruptedFrame, 0, "", {}}};
    EXPECT_EQ(f.findStack(f.locks[0].sites[0].stack_id)->frames, want);
    EXPECT_EQ(kept.capture().locks[0].sites.size(), 2u) << "a delta keeps what the kernel gave";
    // A page fault is not asynchronous: its caller is the code that faulted.
    Capture fault = irqSlice("copy_user_generic", 9);
    fault.stacks[0].frames[1].function = "asm_exc_page_fault";
    CaptureSum faults(SumLimits{.fold_interrupted = true});
    faults.add(fault);
    EXPECT_EQ(faults.capture().stacks[0].frames, fault.stacks[0].frames);
}

} // namespace
} // namespace lockscope::agent
