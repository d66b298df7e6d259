// SPDX-License-Identifier: GPL-2.0-or-later
// Checks on the lab.two_kernels fixture: `lockscope lab` recorded the same
// workload on two Debian kernel builds; the captures must be labelled with
// their kernels and their locks must match by key across the builds.
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include <gtest/gtest.h>

#include "lockscope/capture/io.h"

namespace fs = std::filesystem;

namespace {

const fs::path kPair = LAB_PAIR_DIR;

lockscope::Capture load(const std::string& name)
{
    auto path = kPair / (name + ".lockscope.json");
    if (!fs::exists(path))
        throw std::runtime_error("lab.two_kernels brought back no " + path.string() + " (see its output and " +
                                 (kPair / (name + ".serial.log")).string() + ")");
    return lockscope::readCapture(path.string());
}

std::set<std::string> activeKeys(const lockscope::Capture& c)
{
    std::set<std::string> keys;
    for (const auto& l : c.locks)
        if (l.wait.count() + l.hold.count() > 0)
            keys.insert(l.key);
    return keys;
}

} // namespace

TEST(KernelPair, CapturesAreLabelledWithTheirKernel)
{
    auto generic = load("generic");
    auto cloud = load("cloud");
    EXPECT_EQ(generic.meta.label, "generic");
    EXPECT_EQ(cloud.meta.label, "cloud");
    EXPECT_NE(generic.meta.kernel_release, cloud.meta.kernel_release);
    EXPECT_NE(generic.meta.kernel_release.find("-amd64"), std::string::npos) << generic.meta.kernel_release;
    EXPECT_NE(cloud.meta.kernel_release.find("-cloud-amd64"), std::string::npos) << cloud.meta.kernel_release;
    for (const auto* c : {&generic, &cloud}) {
        ASSERT_TRUE(c->workload.exit_status.has_value());
        EXPECT_EQ(*c->workload.exit_status, 0);
        EXPECT_EQ(c->workload.results.value("syscalls", 0), 8000);
    }
}

TEST(KernelPair, LocksMatchByKeyAcrossTheBuilds)
{
    auto a = activeKeys(load("generic"));
    auto b = activeKeys(load("cloud"));
    ASSERT_FALSE(a.empty());
    ASSERT_FALSE(b.empty());
    std::set<std::string> both;
    for (const auto& k : a)
        if (b.count(k))
            both.insert(k);
    // Addresses differ between builds (and KASLR); keys do not.
    EXPECT_GE(both.size(), 1u) << "no lock key seen on both kernels";
    bool sem = false;
    for (const auto& k : both)
        sem |= k.find("sem") != std::string::npos;
    EXPECT_TRUE(sem) << "the semaphore lock of the semop workload is not matched across the builds";
}

TEST(KernelPair, CompareReportWasWritten)
{
    std::ifstream in(kPair / "compare-cloud.txt");
    std::ostringstream s;
    s << in.rdbuf();
    ASSERT_FALSE(s.str().empty()) << "lockscope compare produced nothing";
    EXPECT_NE(s.str().find("generic"), std::string::npos);
    EXPECT_NE(s.str().find("cloud"), std::string::npos);
}

// The lab says how it ran each guest: the guest alone cannot tell TCG's
// threading, and only the host knows its cores and load.
TEST(KernelPair, CapturesSayHowTheLabRanTheirGuest)
{
    for (const char* name : {"generic", "cloud"}) {
        const auto v = load(name).meta.virtualization;
        EXPECT_EQ(v.detected_by, "lab") << name;
        EXPECT_TRUE(v.kind == "tcg" || v.kind == "kvm") << name << ": " << v.kind << " (lab.two_kernels runs --accel auto)";
        EXPECT_EQ(v.vcpus, 2u) << name;
        EXPECT_GE(v.host_cores, 1u) << name;
        EXPECT_TRUE(v.host_load.has_value()) << name;
        if (v.kind == "tcg") {
            EXPECT_EQ(v.hypervisor, "TCG") << name << ": the vendor the guest saw in CPUID";
        }
    }
}
