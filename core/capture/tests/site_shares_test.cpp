// SPDX-License-Identifier: GPL-2.0-or-later
#include <gtest/gtest.h>

#include "lockscope/capture/calltree.h"
#include "lockscope/capture/site_shares.h"

namespace lockscope {
namespace {

Stack stack(uint32_t id, std::initializer_list<const char*> innermostFirst)
{
    Stack s;
    s.id = id;
    for (const char* n : innermostFirst)
        s.frames.push_back(Frame{n, 0x10, "", std::nullopt});
    return s;
}

LockSite site(uint32_t stackId, uint64_t waits, uint64_t waitNsEach, uint64_t holds = 0, uint64_t holdNsEach = 0)
{
    LockSite s;
    s.stack_id = stackId;
    if (waits)
        s.wait.add(waitNsEach, waits);
    if (holds)
        s.hold.add(holdNsEach, holds);
    return s;
}

// One lock: 3 walked waits on path A, 1 on path B, 996 not walked.
Capture sampled()
{
    Capture c;
    c.stacks = {stack(1, {"sem_lock", "do_semtimedop"}), stack(2, {"sem_lock", "semctl_main"}),
                stack(3, {kNotSampledFrame}), stack(4, {kNoStackFrame})};
    Lock l;
    l.key = "spinlock@sem_lock";
    l.type = "spinlock";
    l.sites = {site(1, 3, 1000), site(2, 1, 1000), site(3, 996, 1000), site(4, 2, 500)};
    for (const auto& s : l.sites)
        l.wait.merge(s.wait);
    c.locks.push_back(l);
    return c;
}

TEST(SiteShares, UnwalkedWaitsGoToWalkedPathsInProportionAndAddUpExactly)
{
    const Capture c = sampled();
    const StackIndex index(c);
    const LockShares s = shareOutUnsampled(c.locks[0], index);
    ASSERT_EQ(s.sites.size(), 3u) << "the [stack not sampled] site is gone, [no stack] stays";
    EXPECT_EQ(s.sites[0].stack_id, 1u);
    EXPECT_EQ(s.sites[0].waits, 750u);
    EXPECT_EQ(s.sites[1].waits, 250u);
    EXPECT_EQ(s.sites[2].waits, 2u) << "a failed walk names no path and takes no share";
    uint64_t waits = 0, ns = 0;
    for (const auto& x : s.sites) {
        waits += x.waits;
        ns += x.wait_ns;
    }
    EXPECT_EQ(waits, c.locks[0].wait.count());
    EXPECT_EQ(ns, c.locks[0].wait.total());
    EXPECT_EQ(s.waits.walked, 4u);
    EXPECT_EQ(s.waits.all, 1000u);
    EXPECT_TRUE(s.waits.sampled());
    EXPECT_FALSE(s.holds.sampled());
    EXPECT_GT(s.waits.shareUncertainty(), 0.4) << "4 walked of 1000 say little";
}

TEST(SiteShares, RemaindersKeepTheTotalExact)
{
    Capture c;
    c.stacks = {stack(1, {"a"}), stack(2, {"b"}), stack(3, {"c"}), stack(9, {kNotSampledFrame})};
    Lock l;
    l.sites = {site(1, 1, 7), site(2, 1, 7), site(3, 1, 7), site(9, 10, 3)};
    c.locks.push_back(l);
    const LockShares s = shareOutUnsampled(c.locks[0], StackIndex(c));
    ASSERT_EQ(s.sites.size(), 3u);
    EXPECT_EQ(s.sites[0].waits + s.sites[1].waits + s.sites[2].waits, 13u);
    EXPECT_EQ(s.sites[0].wait_ns + s.sites[1].wait_ns + s.sites[2].wait_ns, 21u + 30u);
    EXPECT_EQ(s.sites[0].waits, 5u) << "ties go to the first";
    EXPECT_EQ(s.sites[2].waits, 4u);
}

TEST(SiteShares, AKindNoWalkedSiteHasStaysNotSampled)
{
    // Holds were walked on one path, waits never: the waits keep the pseudo path.
    Capture c;
    c.stacks = {stack(1, {"a"}), stack(9, {kNotSampledFrame})};
    Lock l;
    l.sites = {site(1, 0, 0, 5, 100), site(9, 40, 10, 20, 100)};
    c.locks.push_back(l);
    const LockShares s = shareOutUnsampled(c.locks[0], StackIndex(c));
    ASSERT_EQ(s.sites.size(), 2u);
    EXPECT_EQ(s.sites[0].holds, 25u);
    EXPECT_EQ(s.sites[0].hold_ns, 2500u);
    EXPECT_EQ(s.sites[1].waits, 40u);
    EXPECT_EQ(s.sites[1].holds, 0u);
    EXPECT_FALSE(s.waits.sampled()) << "no walked wait to share from";
    EXPECT_EQ(s.holds.walked, 5u);
    EXPECT_EQ(s.holds.all, 25u);
}

TEST(SiteShares, NothingWalkedAtAllKeepsThePseudoPath)
{
    Capture c;
    c.stacks = {stack(9, {kNotSampledFrame})};
    Lock l;
    l.sites = {site(9, 40, 10)};
    c.locks.push_back(l);
    const LockShares s = shareOutUnsampled(c.locks[0], StackIndex(c));
    ASSERT_EQ(s.sites.size(), 1u);
    EXPECT_EQ(s.sites[0].waits, 40u);
}

TEST(SiteShares, EveryStackWalkedChangesNothing)
{
    Capture c;
    c.stacks = {stack(1, {"a"}), stack(2, {"b"})};
    Lock l;
    l.sites = {site(1, 3, 10), site(2, 1, 20)};
    c.locks.push_back(l);
    const LockShares s = shareOutUnsampled(c.locks[0], StackIndex(c));
    ASSERT_EQ(s.sites.size(), 2u);
    EXPECT_EQ(s.sites[0].waits, 3u);
    EXPECT_EQ(s.sites[1].wait_ns, 20u);
    EXPECT_EQ(s.waits.shareUncertainty(), 0.0);
}

TEST(SiteShares, CallTreeOfASampledLockShowsPathsWithTheLocksTotal)
{
    const Capture c = sampled();
    const CallTree t = CallTree::forLock(c, c.locks[0], TreeDirection::TopDown);
    EXPECT_EQ(t.root().total.count, 1002u);
    EXPECT_EQ(t.root().total.wait_ns, c.locks[0].wait.total());
    EXPECT_EQ(t.findChild(CallTree::kRoot, kNotSampledFrame, ""), CallTree::kRoot);
    const uint32_t sem = t.findChild(CallTree::kRoot, "do_semtimedop", "");
    ASSERT_NE(sem, CallTree::kRoot);
    EXPECT_EQ(t.node(sem).total.count, 750u);
}

} // namespace
} // namespace lockscope
