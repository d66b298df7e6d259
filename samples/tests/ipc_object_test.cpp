// SPDX-License-Identifier: GPL-2.0-or-later
#include <gtest/gtest.h>

#include "lockscope/scaling/ipc_object.h"
#include "lockscope/scaling/runner.h"

using namespace lockscope::scaling;

class IpcObjectTest : public ::testing::TestWithParam<Variant> {};

TEST_P(IpcObjectTest, PermissionAndSecurityChecksDecide)
{
    auto o = makeIpcSemObject(GetParam(), 4, {1000, 1000, 0660, 7});
    EXPECT_EQ(o->semop({1000, 5, 0}, 0, 1), SemopResult::Ok);      // owner
    EXPECT_EQ(o->semop({2000, 1000, 1}, 0, 1), SemopResult::Ok);   // group
    EXPECT_EQ(o->semop({2000, 2000, 0}, 0, 1), SemopResult::Access);  // other: mode 0
    EXPECT_EQ(o->semop({0, 0, 0}, 0, 1), SemopResult::Ok);         // root
    EXPECT_EQ(o->semop({1000, 1000, 13}, 0, 1), SemopResult::Access);  // denied by the policy
    EXPECT_EQ(o->value(0), 3);
}

TEST_P(IpcObjectTest, NeverGoesNegativeAndHonoursRemoval)
{
    auto o = makeIpcSemObject(GetParam(), 2, {});
    Credentials owner{1000, 1000, 0};
    EXPECT_EQ(o->semop(owner, 1, -1), SemopResult::Again);
    EXPECT_EQ(o->value(1), 0);
    EXPECT_EQ(o->semop(owner, 1, 2), SemopResult::Ok);
    EXPECT_EQ(o->semop(owner, 1, -3), SemopResult::Again);
    EXPECT_EQ(o->semop(owner, 1, -2), SemopResult::Ok);
    o->markRemoved();
    EXPECT_EQ(o->semop(owner, 1, 1), SemopResult::Removed);
}

TEST_P(IpcObjectTest, ConcurrentBalancedOpsLeaveZero)
{
    PointResult r = runOps(*findPair("sem-lock-scope"), GetParam(), 4, 20000, true);
    EXPECT_EQ(r.violation, "");
    EXPECT_EQ(r.ops, 80000u);
    ASSERT_EQ(r.locks.size(), 1u);
    EXPECT_EQ(r.locks[0].wait.count(), 2 * r.ops + 128);  // + the final value() reads
    EXPECT_EQ(r.locks[0].hold.count(), 2 * r.ops + 128);  // + the final value() reads
}

INSTANTIATE_TEST_SUITE_P(Variants, IpcObjectTest, ::testing::Values(Variant::Before, Variant::After),
                         [](const auto& p) { return std::string(variantName(p.param)); });
