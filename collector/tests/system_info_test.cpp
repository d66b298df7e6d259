// SPDX-License-Identifier: GPL-2.0-or-later
#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>
#include <sys/utsname.h>

#include "lockscope/record/system_info.h"

using namespace lockscope::record;

namespace {

void put32(std::string& s, uint32_t v)
{
    char b[4];
    std::memcpy(b, &v, 4);
    s.append(b, 4);
}

std::string note(uint32_t type, std::string name, const std::string& desc)
{
    std::string s;
    name.push_back('\0');
    put32(s, uint32_t(name.size()));
    put32(s, uint32_t(desc.size()));
    put32(s, type);
    s += name;
    s.append((4 - name.size() % 4) % 4, '\0');
    s += desc;
    s.append((4 - desc.size() % 4) % 4, '\0');
    return s;
}

} // namespace

TEST(SystemInfo, BuildIdFromNotes)
{
    std::string id("\x01\x23\x45\x67\x89\xab\xcd\xef\x00\x11\x22\x33\x44\x55\x66\x77\x88\x99\xaa\xbb", 20);
    // Other notes first (Xen, a GNU note of another type) must be stepped over.
    std::string notes = note(6, "Xen", "abc") + note(1, "GNU", std::string(16, '\0')) + note(3, "GNU", id);
    EXPECT_EQ(parseBuildIdNote(notes), "0123456789abcdef00112233445566778899aabb");
    EXPECT_EQ(parseBuildIdNote(note(3, "Linux", id)), "");
    EXPECT_EQ(parseBuildIdNote(""), "");
}

TEST(SystemInfo, TruncatedNotesAreSafe)
{
    std::string id(20, '\x5a');
    std::string notes = note(3, "GNU", id);
    for (size_t cut = 0; cut < notes.size(); ++cut)
        EXPECT_EQ(parseBuildIdNote(notes.substr(0, cut)), "") << cut;
    std::string huge;
    put32(huge, 0xfffffff0u);
    put32(huge, 0xfffffff0u);
    put32(huge, 3);
    EXPECT_EQ(parseBuildIdNote(huge), "");
}

TEST(SystemInfo, RealKernelNotes)
{
    std::ifstream in("/sys/kernel/notes", std::ios::binary);
    if (!in)
        GTEST_SKIP() << "skipped: /sys/kernel/notes not readable";
    std::stringstream ss;
    ss << in.rdbuf();
    std::string id = parseBuildIdNote(ss.str());
    if (id.empty())
        GTEST_SKIP() << "skipped: this kernel was built without a GNU build id note";
    EXPECT_EQ(id.size() % 2, 0u);
    EXPECT_GE(id.size(), 16u);
    EXPECT_EQ(id.find_first_not_of("0123456789abcdef"), std::string::npos) << id;
}

TEST(SystemInfo, CpuModel)
{
    EXPECT_EQ(parseCpuModel("processor\t: 0\nvendor_id\t: GenuineIntel\nmodel\t\t: 85\n"
                            "model name\t: Intel(R) Xeon(R) Gold 6148 CPU @ 2.40GHz\n"),
              "Intel(R) Xeon(R) Gold 6148 CPU @ 2.40GHz");
    EXPECT_EQ(parseCpuModel("model\t\t: 85\n"), "");
    EXPECT_EQ(parseCpuModel(""), "");
}

TEST(SystemInfo, Rfc3339)
{
    using namespace std::chrono;
    system_clock::time_point t{seconds(1700000000) + milliseconds(42)};
    EXPECT_EQ(rfc3339(t), "2023-11-14T22:13:20.042Z");
}

TEST(SystemInfo, FillsFromThisMachine)
{
    lockscope::Meta m;
    fillSystemMeta(m);
    utsname u{};
    ASSERT_EQ(uname(&u), 0);
    EXPECT_EQ(m.kernel_release, u.release);
    EXPECT_EQ(m.kernel_version, u.version);
    EXPECT_EQ(m.hostname, u.nodename);
    EXPECT_GE(m.cpu_count, 1u);
    EXPECT_FALSE(m.tool_version.empty());
}

TEST(SystemInfo, ClassifiesTheHypervisorFromItsClues)
{
    auto kind = [](VirtualizationClues c) { return classifyVirtualization(c); };
    VirtualizationClues kvm;
    kvm.hypervisor_flag = true;
    kvm.cpuid_vendor = "KVMKVMKVM";
    EXPECT_EQ(kind(kvm).kind, "kvm");
    EXPECT_EQ(kind(kvm).hypervisor, "KVM");
    EXPECT_EQ(kind(kvm).detected_by, "cpuid");

    VirtualizationClues tcg = kvm;
    tcg.cpuid_vendor = "TCGTCGTCGTCG";
    EXPECT_EQ(kind(tcg).kind, "tcg");

    VirtualizationClues hyperv = kvm;
    hyperv.cpuid_vendor = "Microsoft Hv";
    EXPECT_EQ(kind(hyperv).kind, "vm");
    EXPECT_EQ(kind(hyperv).hypervisor, "Microsoft Hyper-V");

    VirtualizationClues unknown = kvm;
    unknown.cpuid_vendor = "NewVisor";
    EXPECT_EQ(kind(unknown).kind, "vm");
    EXPECT_EQ(kind(unknown).hypervisor, "NewVisor") << "an unknown vendor is kept as the guest sees it";

    VirtualizationClues flagOnly;
    flagOnly.hypervisor_flag = true;
    EXPECT_EQ(kind(flagOnly).kind, "vm");

    // qemu -cpu qemu64,-hypervisor (the lab's tcg-multi) hides the bit; DMI still says QEMU.
    VirtualizationClues hidden;
    hidden.dmi_vendor = "QEMU";
    hidden.dmi_product = "Standard PC (i440FX + PIIX, 1996)";
    EXPECT_EQ(kind(hidden).kind, "vm");
    EXPECT_EQ(kind(hidden).detected_by, "dmi");

    VirtualizationClues xen;
    xen.sys_hypervisor = "xen";
    EXPECT_EQ(kind(xen).kind, "vm");

    VirtualizationClues metal;
    metal.dmi_vendor = "Dell Inc.";
    metal.dmi_product = "PowerEdge R650";
    EXPECT_EQ(kind(metal).kind, "none");
}

// systemd-detect-virt reads the same clues: where it is installed, the two agree.
TEST(SystemInfo, VirtualizationAgreesWithSystemdDetectVirt)
{
    FILE* p = ::popen("systemd-detect-virt --vm 2>/dev/null", "r");
    char buf[64] = {};
    const bool got = p && std::fgets(buf, sizeof buf, p);
    const int rc = p ? ::pclose(p) : -1;
    if (!got || (rc != 0 && std::string(buf).rfind("none", 0) != 0))
        GTEST_SKIP() << "skipped: systemd-detect-virt is not installed here";
    std::string theirs(buf);
    theirs = theirs.substr(0, theirs.find('\n'));
    lockscope::Meta m;
    fillSystemMeta(m);
    const std::string expected = theirs == "none" ? "none" : theirs == "kvm" ? "kvm" : theirs == "qemu" ? "tcg" : "vm";
    EXPECT_EQ(m.virtualization.kind, expected) << "systemd-detect-virt --vm says " << theirs;
}
