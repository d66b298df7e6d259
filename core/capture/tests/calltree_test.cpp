// SPDX-License-Identifier: GPL-2.0-or-later
#include <gtest/gtest.h>

#include "lockscope/capture/calltree.h"
#include "sample_capture.h"

namespace lockscope {
namespace {

// Innermost first, as in Stack::frames.
std::vector<Frame> frames(std::initializer_list<const char*> names)
{
    std::vector<Frame> f;
    for (const char* n : names)
        f.push_back(Frame { n, 0x10, "", std::nullopt });
    return f;
}

uint32_t path(const CallTree& t, std::initializer_list<const char*> names)
{
    uint32_t cur = CallTree::kRoot;
    for (const char* n : names) {
        cur = t.findChild(cur, n, "");
        if (cur == CallTree::kRoot)
            return CallTree::kRoot;
    }
    return cur;
}

// Two stacks sharing the syscall entry, one ending in the spin lock slow path.
void addSample(CallTree& t)
{
    t.addStack(frames({ "queued_spin_lock_slowpath", "_raw_spin_lock", "do_semtimedop", "do_syscall_64" }),
        Weights { 10, 1000, 50 });
    t.addStack(frames({ "perform_atomic_semop", "do_semtimedop", "do_syscall_64" }), Weights { 4, 0, 20 });
    t.addStack(frames({ "_raw_spin_lock", "__lock_timer", "do_syscall_64" }), Weights { 1, 30, 5 });
}

TEST(CallTree, TopDownSelfAndTotal)
{
    CallTree t(TreeDirection::TopDown);
    addSample(t);
    EXPECT_EQ(t.root().total, (Weights { 15, 1030, 75 }));
    const uint32_t sys = path(t, { "do_syscall_64" });
    ASSERT_NE(sys, CallTree::kRoot);
    EXPECT_EQ(t.node(sys).total, (Weights { 15, 1030, 75 }));
    EXPECT_EQ(t.self(sys), Weights {});
    const uint32_t sem = path(t, { "do_syscall_64", "do_semtimedop" });
    EXPECT_EQ(t.node(sem).total, (Weights { 14, 1000, 70 }));
    EXPECT_EQ(t.children(sem).size(), 2u);
    const uint32_t slow
        = path(t, { "do_syscall_64", "do_semtimedop", "_raw_spin_lock", "queued_spin_lock_slowpath" });
    ASSERT_NE(slow, CallTree::kRoot);
    EXPECT_EQ(t.self(slow), (Weights { 10, 1000, 50 }));
    EXPECT_EQ(t.node(slow).total, t.self(slow));
    // _raw_spin_lock under __lock_timer is a different node from the one under do_semtimedop.
    const uint32_t timerSpin = path(t, { "do_syscall_64", "__lock_timer", "_raw_spin_lock" });
    EXPECT_EQ(t.self(timerSpin), (Weights { 1, 30, 5 }));
    EXPECT_EQ(t.size(), 1u + 1 + 1 + 1 + 1 + 1 + 1 + 1); // root + 7 distinct nodes
}

// self is worked out from the totals: a node that some stacks end at and
// others pass through, and the root under a stack without frames.
TEST(CallTree, SelfIsWhatEndedAtANodeOthersPassThrough)
{
    for (auto dir : { TreeDirection::TopDown, TreeDirection::BottomUp }) {
        CallTree t(dir);
        addSample(t);
        t.addStack(frames({ "do_semtimedop", "do_syscall_64" }), Weights { 3, 300, 9 });
        t.addStack({}, Weights { 2, 20, 0 });
        EXPECT_EQ(t.self(CallTree::kRoot), (Weights { 2, 20, 0 }));
        const uint32_t sem = dir == TreeDirection::TopDown ? path(t, { "do_syscall_64", "do_semtimedop" })
                                                           : path(t, { "do_semtimedop", "do_syscall_64" });
        ASSERT_NE(sem, CallTree::kRoot);
        EXPECT_EQ(t.self(sem), (Weights { 3, 300, 9 }));
        Weights selves;
        for (uint32_t id = 0; id < t.size(); ++id)
            selves += t.self(id);
        EXPECT_EQ(selves, t.root().total) << "every event ends at one node";
    }
}

TEST(CallTree, BottomUpStartsAtLeaves)
{
    CallTree t(TreeDirection::BottomUp);
    addSample(t);
    EXPECT_EQ(t.children(CallTree::kRoot).size(), 3u); // three distinct leaf functions
    const uint32_t slow = path(t, { "queued_spin_lock_slowpath" });
    EXPECT_EQ(t.node(slow).total, (Weights { 10, 1000, 50 }));
    const uint32_t spin = path(t, { "_raw_spin_lock" });
    EXPECT_EQ(t.node(spin).total, (Weights { 1, 30, 5 }));
    // Who calls _raw_spin_lock as a leaf: __lock_timer, then the syscall entry (self ends there).
    const uint32_t caller = path(t, { "_raw_spin_lock", "__lock_timer", "do_syscall_64" });
    ASSERT_NE(caller, CallTree::kRoot);
    EXPECT_EQ(t.self(caller), (Weights { 1, 30, 5 }));
    // Totals at the first level add up to the root's.
    Weights sum;
    for (uint32_t c : t.children(CallTree::kRoot))
        sum += t.node(c).total;
    EXPECT_EQ(sum, t.root().total);
}

TEST(CallTree, MergeEqualsBuildingFromAllStacks)
{
    for (auto dir : { TreeDirection::TopDown, TreeDirection::BottomUp }) {
        CallTree a(dir), b(dir), both(dir);
        addSample(a);
        b.addStack(frames({ "d_move", "vfs_rename", "do_syscall_64" }), Weights { 2, 7, 1 });
        b.addStack(frames({ "perform_atomic_semop", "do_semtimedop", "do_syscall_64" }), Weights { 1, 0, 2 });
        addSample(both);
        both.addStack(frames({ "d_move", "vfs_rename", "do_syscall_64" }), Weights { 2, 7, 1 });
        both.addStack(
            frames({ "perform_atomic_semop", "do_semtimedop", "do_syscall_64" }), Weights { 1, 0, 2 });
        a.merge(b);
        ASSERT_EQ(a.size(), both.size());
        for (uint32_t i = 0; i < a.size(); ++i) {
            EXPECT_EQ(a.function(i), both.function(i));
            EXPECT_EQ(a.module(i), both.module(i));
            EXPECT_EQ(a.self(i), both.self(i));
            EXPECT_EQ(a.node(i).total, both.node(i).total);
        }
    }
    CallTree td(TreeDirection::TopDown), bu(TreeDirection::BottomUp);
    EXPECT_THROW(td.merge(bu), std::invalid_argument);
}

TEST(CallTree, UnresolvedFramesStayApartByAddress)
{
    CallTree t(TreeDirection::TopDown);
    t.addStack({ Frame { "", 0, "", 0xffffffff81001000ull } }, Weights { 1, 1, 0 });
    t.addStack({ Frame { "", 0, "", 0xffffffff81002000ull } }, Weights { 1, 1, 0 });
    EXPECT_EQ(t.children(CallTree::kRoot).size(), 2u);
    EXPECT_NE(t.findChild(CallTree::kRoot, "0xffffffff81001000", ""), CallTree::kRoot);
}

TEST(CallTree, ForLockUsesSiteStacks)
{
    const Capture c = testing::makeSemopCapture(testing::SemopScenario::Baseline);
    const Lock& sem = c.locks.at(0);
    ASSERT_EQ(sem.key, "spinlock@sem_lock");
    const CallTree t = CallTree::forLock(c, sem, TreeDirection::BottomUp);
    EXPECT_EQ(t.root().total.count, sem.wait.count());
    EXPECT_EQ(t.root().total.wait_ns, sem.wait.total());
    const uint32_t slow = t.findChild(CallTree::kRoot, "queued_spin_lock_slowpath", "");
    EXPECT_EQ(t.node(slow).total.wait_ns, sem.wait.total());
    const CallTree all = CallTree::forCapture(c, TreeDirection::TopDown);
    uint64_t waits = 0;
    for (const auto& l : c.locks)
        for (const auto& s : l.sites)
            waits += s.wait.total();
    EXPECT_EQ(all.root().total.wait_ns, waits);
}

// A finished tree (forCapture, forLock) drops the indexes it was built with;
// adding to it after, or merging into it, finds the nodes it has, and the
// children laid out before it grew are laid out again.
TEST(CallTree, AFinishedTreeAddedToAgainReusesItsNodes)
{
    const Capture c = testing::makeSemopCapture(testing::SemopScenario::Baseline);
    CallTree t = CallTree::forCapture(c, TreeDirection::TopDown);
    const CallTree built = CallTree::forCapture(c, TreeDirection::TopDown);
    const size_t rootKids = t.children(CallTree::kRoot).size();
    const size_t size = t.size();
    uint64_t added = 0;
    for (const auto& l : c.locks)
        for (const auto& site : l.sites)
            for (const auto& s : c.stacks)
                if (s.id == site.stack_id) {
                    t.addStack(s.frames, Weights { 1, 1, 0 });
                    ++added;
                }
    ASSERT_GT(added, 0u);
    EXPECT_EQ(t.size(), size) << "every site's path is in the tree already";
    EXPECT_EQ(t.root().total.count, built.root().total.count + added);
    t.addStack(frames({ "a_new_leaf", "a_new_caller" }), Weights { 1, 1, 0 });
    EXPECT_EQ(t.size(), size + 2);
    EXPECT_EQ(t.children(CallTree::kRoot).size(), rootKids + 1);
    const uint32_t caller = t.findChild(CallTree::kRoot, "a_new_caller", "");
    ASSERT_NE(caller, CallTree::kRoot);
    ASSERT_EQ(t.children(caller).size(), 1u);
    EXPECT_EQ(t.function(t.children(caller)[0]), InternedString("a_new_leaf"));
    CallTree merged = CallTree::forCapture(c, TreeDirection::TopDown);
    merged.merge(built);
    EXPECT_EQ(merged.size(), size) << "a merge of the same paths adds no node";
    EXPECT_EQ(merged.root().total.count, 2 * built.root().total.count);
}

TEST(CallTree, FrameLabel)
{
    EXPECT_EQ(frameLabel(Frame { "sem_lock", 0, "", std::nullopt }), "sem_lock");
    EXPECT_EQ(frameLabel(Frame { "xfs_ilock", 0, "xfs", std::nullopt }), "xfs_ilock [xfs]");
    EXPECT_EQ(frameLabel(Frame { "", 0, "", std::nullopt }), "[unknown]");
}

} // namespace
} // namespace lockscope
