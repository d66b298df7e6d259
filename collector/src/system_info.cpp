// SPDX-License-Identifier: GPL-2.0-or-later
#include "lockscope/record/system_info.h"

#include <cstdint>
#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#endif
#include <cstdio>
#include <cstring>
#include <ctime>
#include <sstream>
#include <sys/utsname.h>
#include <unistd.h>

#include "lockscope/util/file_text.h"

namespace lockscope::record {
namespace {

uint32_t readU32(std::string_view s, size_t at)
{
    uint32_t v;
    std::memcpy(&v, s.data() + at, sizeof v);
    return v;  // notes are in the kernel's (native) byte order
}

size_t align4(size_t n)
{
    return (n + 3) & ~size_t(3);
}

} // namespace

std::string parseBuildIdNote(std::string_view notes)
{
    constexpr uint32_t kNtGnuBuildId = 3;
    size_t pos = 0;
    while (notes.size() - pos >= 12) {
        uint32_t namesz = readU32(notes, pos), descsz = readU32(notes, pos + 4),
                 type = readU32(notes, pos + 8);
        pos += 12;
        size_t nameEnd = pos + align4(namesz);
        if (namesz > notes.size() || nameEnd > notes.size())
            return {};
        std::string_view name = notes.substr(pos, namesz);
        size_t descEnd = nameEnd + align4(descsz);
        if (descsz > notes.size() || descEnd > notes.size())
            return {};
        if (type == kNtGnuBuildId && name == std::string_view("GNU\0", 4) && descsz > 0) {
            std::string hex;
            char buf[3];
            for (size_t i = 0; i < descsz; ++i) {
                std::snprintf(buf, sizeof buf, "%02x", static_cast<unsigned char>(notes[nameEnd + i]));
                hex += buf;
            }
            return hex;
        }
        pos = descEnd;
    }
    return {};
}

std::string parseCpuModel(std::string_view cpuinfo)
{
    for (std::string_view key : {"model name", "Processor", "cpu model", "cpu"}) {
        size_t pos = 0;
        while (pos < cpuinfo.size()) {
            size_t nl = cpuinfo.find('\n', pos);
            std::string_view line =
                cpuinfo.substr(pos, nl == std::string_view::npos ? std::string_view::npos : nl - pos);
            pos = nl == std::string_view::npos ? cpuinfo.size() : nl + 1;
            if (line.substr(0, key.size()) != key)
                continue;
            size_t colon = line.find(':');
            if (colon == std::string_view::npos)
                continue;
            std::string_view field = line.substr(key.size(), colon - key.size());
            if (field.find_first_not_of(" \t") != std::string_view::npos)
                continue;  // "model name" must not match "model"
            std::string_view v = line.substr(colon + 1);
            size_t b = v.find_first_not_of(" \t");
            if (b == std::string_view::npos)
                continue;
            v = v.substr(b);
            while (!v.empty() && (v.back() == ' ' || v.back() == '\r'))
                v.remove_suffix(1);
            return std::string(v);
        }
    }
    return {};
}

std::string rfc3339(std::chrono::system_clock::time_point t)
{
    auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(t.time_since_epoch()).count();
    std::time_t secs = static_cast<std::time_t>(ms / 1000);
    std::tm tm{};
    gmtime_r(&secs, &tm);
    char buf[96];
    std::snprintf(buf, sizeof buf, "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", tm.tm_year + 1900,
                  tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, int(ms % 1000));
    return buf;
}

namespace {

std::string firstLineOf(const char* path)
{
    std::string s = util::readTextFile(path);
    s = s.substr(0, s.find('\n'));
    while (!s.empty() && (s.back() == ' ' || s.back() == '\r' || s.back() == '\0'))
        s.pop_back();
    return s;
}

bool cpuinfoHasFlag(const std::string& cpuinfo, const std::string& flag)
{
    std::istringstream lines(cpuinfo);
    for (std::string line; std::getline(lines, line);) {
        if (line.rfind("flags", 0) != 0)
            continue;
        std::istringstream words(line.substr(line.find(':') == std::string::npos ? 0 : line.find(':') + 1));
        for (std::string w; words >> w;)
            if (w == flag)
                return true;
        return false;
    }
    return false;
}

std::string cpuidHypervisorVendor()
{
#if defined(__x86_64__) || defined(__i386__)
    unsigned a = 0, b = 0, c = 0, d = 0;
    __cpuid(0x40000000, a, b, c, d);
    char v[13] = {};
    std::memcpy(v, &b, 4);
    std::memcpy(v + 4, &c, 4);
    std::memcpy(v + 8, &d, 4);
    std::string s(v);
    while (!s.empty() && s.back() == ' ')
        s.pop_back();
    return s;
#else
    return {};
#endif
}

// Signatures of CPUID leaf 0x40000000 -> the name a person knows.
struct VendorName {
    const char* signature;
    const char* kind;
    const char* name;
};
constexpr VendorName kVendors[] = {
    {"KVMKVMKVM", "kvm", "KVM"},       {"TCGTCGTCGTCG", "tcg", "TCG"},     {"Microsoft Hv", "vm", "Microsoft Hyper-V"},
    {"VMwareVMware", "vm", "VMware"},  {"XenVMMXenVMM", "vm", "Xen"},      {"VBoxVBoxVBox", "vm", "VirtualBox"},
    {"bhyve bhyve", "vm", "bhyve"},    {"ACRNACRNACRN", "vm", "ACRN"},     {"QNXQVMBSQG", "vm", "QNX"},
    {"Linux KVM Hv", "kvm", "KVM (Hyper-V enlightened)"},
};

bool dmiSaysVirtual(const VirtualizationClues& c)
{
    for (const char* v : {"QEMU", "KVM", "VMware", "innotek", "Xen", "Amazon EC2", "Google", "Parallels", "Bochs"})
        if (c.dmi_vendor.find(v) != std::string::npos || c.dmi_product.find(v) != std::string::npos)
            return true;
    return c.dmi_vendor == "Microsoft Corporation" && c.dmi_product == "Virtual Machine";
}

} // namespace

VirtualizationClues readVirtualizationClues()
{
    VirtualizationClues c;
    c.hypervisor_flag = cpuinfoHasFlag(util::readTextFile("/proc/cpuinfo"), "hypervisor");
    if (c.hypervisor_flag) // leaf 0x40000000 means nothing without the bit
        c.cpuid_vendor = cpuidHypervisorVendor();
    c.sys_hypervisor = firstLineOf("/sys/hypervisor/type");
    c.dmi_vendor = firstLineOf("/sys/class/dmi/id/sys_vendor");
    c.dmi_product = firstLineOf("/sys/class/dmi/id/product_name");
    return c;
}

Virtualization classifyVirtualization(const VirtualizationClues& c)
{
    Virtualization v;
    if (c.hypervisor_flag && !c.cpuid_vendor.empty()) {
        v.detected_by = "cpuid";
        for (const auto& known : kVendors)
            if (c.cpuid_vendor == known.signature) {
                v.kind = known.kind;
                v.hypervisor = known.name;
                return v;
            }
        v.kind = "vm";
        v.hypervisor = c.cpuid_vendor;
        return v;
    }
    if (c.hypervisor_flag) {
        v.kind = "vm";
        v.detected_by = "cpuinfo";
        return v;
    }
    if (!c.sys_hypervisor.empty()) {
        v.kind = "vm";
        v.hypervisor = c.sys_hypervisor;
        v.detected_by = "/sys/hypervisor";
        return v;
    }
    // A hypervisor that hides the CPUID bit (qemu -cpu ...,-hypervisor) still
    // names itself in the firmware tables.
    if (dmiSaysVirtual(c)) {
        v.kind = "vm";
        v.hypervisor = c.dmi_vendor.empty() ? c.dmi_product : c.dmi_vendor;
        v.detected_by = "dmi";
        return v;
    }
    v.kind = "none";
    v.detected_by = "cpuid";
    return v;
}

void fillSystemMeta(Meta& meta)
{
    meta.tool_version = LOCKSCOPE_VERSION;
    utsname u{};
    if (uname(&u) == 0) {
        meta.kernel_release = u.release;
        meta.kernel_version = u.version;
        meta.hostname = u.nodename;
    }
    meta.kernel_build_id = parseBuildIdNote(util::readTextFile("/sys/kernel/notes"));
    meta.cpu_model = parseCpuModel(util::readTextFile("/proc/cpuinfo"));
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    meta.cpu_count = n > 0 ? static_cast<uint32_t>(n) : 0;
    meta.virtualization = classifyVirtualization(readVirtualizationClues());
}

} // namespace lockscope::record
