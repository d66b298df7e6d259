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
