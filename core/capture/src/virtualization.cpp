// SPDX-License-Identifier: GPL-2.0-or-later
#include "lockscope/capture/virtualization.h"

#include <cstdio>

namespace lockscope {

namespace {

std::string kindText(const Virtualization& v)
{
    if (v.kind == "none")
        return "bare metal";
    if (v.kind == "kvm")
        return "a KVM guest";
    if (v.kind == "tcg")
        return "a TCG-emulated guest";
    if (v.kind == "tcg-multi")
        return "a TCG-emulated guest (multi-threaded)";
    if (v.kind == "vm")
        return v.hypervisor.empty() ? "a virtual machine" : "a virtual machine (" + v.hypervisor + ")";
    return "";
}

} // namespace

std::string describeVirtualization(const Virtualization& v)
{
    std::string s = kindText(v);
    if (s.empty())
        return s;
    if (v.vcpus && v.host_cores)
        s += ", " + std::to_string(v.vcpus) + (v.vcpus == 1 ? " vCPU" : " vCPUs") + " on " +
             std::to_string(v.host_cores) + (v.host_cores == 1 ? " host core" : " host cores");
    if (v.host_load) {
        char buf[48];
        std::snprintf(buf, sizeof buf, ", host load %.1f", *v.host_load);
        s += buf;
    }
    return s;
}

bool timesEmulated(const Virtualization& v) { return v.kind == "tcg" || v.kind == "tcg-multi"; }

bool vcpusOvercommitted(const Virtualization& v)
{
    if (!v.vcpus || !v.host_cores)
        return false;
    return v.vcpus > v.host_cores || (v.host_load && *v.host_load > double(v.host_cores));
}

std::string timesCaveat(const Virtualization& v)
{
    if (!timesEmulated(v) && !vcpusOvercommitted(v))
        return "";
    return "recorded in " + describeVirtualization(v) +
           ": waits include vCPU preemption by the host: compare shapes and counts, not absolute times";
}

std::string recordedDifferently(const Virtualization& b, const Virtualization& a)
{
    if (b.kind.empty() || a.kind.empty())
        return "";
    const bool same = b.kind == a.kind && b.vcpus == a.vcpus && b.host_cores == a.host_cores;
    if (same)
        return "";
    return "the sides were recorded differently (before: " + describeVirtualization(b) +
           "; after: " + describeVirtualization(a) + "): their times are not comparable";
}

} // namespace lockscope
