// SPDX-License-Identifier: GPL-2.0-or-later
// record's default on syscall timing, with the kernel's hooks given: fentry
// where the kernel allows it, nothing where only hooks that tax every syscall
// are left, and whatever the user asked for when asked.
#include <gtest/gtest.h>

#include "lockscope/record/syscall_plan.h"

using lockscope::probes::Backend;
using lockscope::probes::SyscallHook;
using lockscope::record::planSyscallTiming;

namespace {

// As probes::syscallHooks() lists them, fentry refused or not.
std::vector<SyscallHook> hooks(const std::string& fentryRefused)
{
    return { { Backend::Fentry, false, fentryRefused }, { Backend::RawTp, true, {} },
        { Backend::Tracepoint, true, {} } };
}

} // namespace

TEST(SyscallPlan, DefaultUsesFentryWhereTheKernelAllowsIt)
{
    auto plan = planSyscallTiming(false, Backend::Auto, hooks(""));
    EXPECT_EQ(plan.backend, Backend::Fentry); // not Auto: no silent fall back to raw_tp
    EXPECT_TRUE(plan.skipped.empty()) << plan.skipped;
}

TEST(SyscallPlan, DefaultSkipsWhenOnlyHooksOnEverySyscallAreLeft)
{
    auto plan = planSyscallTiming(false, Backend::Auto, hooks("load failed: Operation not permitted (EPERM)"));
    EXPECT_EQ(plan.backend, Backend::Off);
    // The reason names the refusal, the cost and both ways to turn timing on.
    EXPECT_NE(plan.skipped.find("fentry refused: load failed: Operation not permitted (EPERM)"), std::string::npos)
        << plan.skipped;
    EXPECT_NE(plan.skipped.find("every syscall"), std::string::npos) << plan.skipped;
    EXPECT_NE(plan.skipped.find("--exact"), std::string::npos) << plan.skipped;
    EXPECT_NE(plan.skipped.find("--syscall-backend raw_tp"), std::string::npos) << plan.skipped;
}

TEST(SyscallPlan, DefaultSkipsWhenNoHookIsListedAtAll)
{
    auto plan = planSyscallTiming(false, Backend::Auto, {});
    EXPECT_EQ(plan.backend, Backend::Off);
    EXPECT_FALSE(plan.skipped.empty());
}

TEST(SyscallPlan, AskingForTimingUsesTheRequestedBackendWhateverItCosts)
{
    for (Backend b : { Backend::Auto, Backend::RawTp, Backend::Tracepoint, Backend::Fentry })
        for (const char* refused : { "", "load failed: EPERM" }) {
            auto plan = planSyscallTiming(true, b, hooks(refused));
            EXPECT_EQ(plan.backend, b) << lockscope::probes::backendName(b) << " refused='" << refused << "'";
            EXPECT_TRUE(plan.skipped.empty()) << plan.skipped;
        }
}
