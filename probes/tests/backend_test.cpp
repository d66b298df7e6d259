// SPDX-License-Identifier: GPL-2.0-or-later
// The backend names the CLI parses and the probe lines print (no BPF needed).
#include <gtest/gtest.h>

#include "lockscope/probes/probes.h"

using lockscope::probes::Backend;

TEST(BackendNames, EveryBackendRoundTripsThroughItsName)
{
    for (Backend b : {Backend::Auto, Backend::Fentry, Backend::Kprobe, Backend::TpBtf, Backend::RawTp,
                      Backend::Tracepoint, Backend::Off}) {
        const std::string name = lockscope::probes::backendName(b);
        EXPECT_EQ(lockscope::probes::backendFromName(name), b) << name;
        EXPECT_NE(lockscope::probes::backendNames().find(name), std::string::npos) << name;
    }
    EXPECT_STREQ(lockscope::probes::backendName(Backend::TpBtf), "tp_btf");
}

TEST(BackendNames, UnknownNamesAreRefused)
{
    for (const char* name : {"", "kprobes", "TP_BTF", "fexit", "?"})
        EXPECT_FALSE(lockscope::probes::backendFromName(name).has_value()) << name;
}

// What each family accepts, as the CLI checks and lists it.
TEST(FamilyBackends, EachFamilyListsAutoItsHooksInOrderAndOffOnlyForHolds)
{
    using lockscope::probes::HookFamily;
    using lockscope::probes::backendNames;
    using lockscope::probes::familyBackends;
    EXPECT_EQ(backendNames(familyBackends(HookFamily::Wait), " or "), "auto, tp_btf, raw_tp or tracepoint");
    EXPECT_EQ(backendNames(familyBackends(HookFamily::Hold), " or "), "auto, fentry, kprobe or off");
    EXPECT_EQ(backendNames(familyBackends(HookFamily::Syscalls)), "auto, fentry, raw_tp, tracepoint");
}

TEST(FamilyBackends, HooksToTryResolveAutoAndRefuseForeignBackends)
{
    using lockscope::probes::HookFamily;
    using lockscope::probes::hooksToTry;
    EXPECT_EQ(hooksToTry(HookFamily::Hold, Backend::Auto), (std::vector<Backend>{Backend::Fentry, Backend::Kprobe}));
    EXPECT_EQ(hooksToTry(HookFamily::Wait, Backend::RawTp), std::vector<Backend>{Backend::RawTp});
    EXPECT_TRUE(hooksToTry(HookFamily::Wait, Backend::Fentry).empty());
    EXPECT_TRUE(hooksToTry(HookFamily::Hold, Backend::Off).empty());
    EXPECT_TRUE(hooksToTry(HookFamily::Syscalls, Backend::Kprobe).empty());
}
