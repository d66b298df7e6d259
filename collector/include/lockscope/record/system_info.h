// SPDX-License-Identifier: GPL-2.0-or-later
#pragma once

#include <chrono>
#include <string>
#include <string_view>

#include "lockscope/capture/capture.h"

// What a capture records about the machine and kernel it ran on, so that two
// captures can be told apart (and matched) later.
namespace lockscope::record {

// The GNU build id (hex) from an ELF note section such as /sys/kernel/notes:
// the note of type NT_GNU_BUILD_ID (3) named "GNU". "" when absent or the
// notes are malformed (never reads past `notes`).
std::string parseBuildIdNote(std::string_view notes);

// "model name" of /proc/cpuinfo text (or "Processor"/"cpu model" on other
// architectures); "" when absent.
std::string parseCpuModel(std::string_view cpuinfo);

// RFC 3339 UTC with milliseconds: 2026-11-29T23:12:55.123Z.
std::string rfc3339(std::chrono::system_clock::time_point t);

// What the recording kernel can tell of the hypervisor it runs under (the
// signals systemd-detect-virt reads): CPUID's hypervisor leaf, the cpuinfo
// "hypervisor" flag, /sys/hypervisor/type, DMI's vendor and product.
struct VirtualizationClues {
    bool hypervisor_flag = false; // /proc/cpuinfo flags: the CPUID hypervisor bit
    std::string cpuid_vendor;     // leaf 0x40000000's 12-byte signature ("KVMKVMKVM"), "" if none
    std::string sys_hypervisor;   // /sys/hypervisor/type ("xen")
    std::string dmi_vendor;       // /sys/class/dmi/id/sys_vendor ("QEMU")
    std::string dmi_product;      // /sys/class/dmi/id/product_name
};
VirtualizationClues readVirtualizationClues();
// Kind, vendor and which clue said so; "none" when no clue points at a
// hypervisor. TCG's signature gives "tcg" (its threading is the lab's to say).
Virtualization classifyVirtualization(const VirtualizationClues& clues);

// Fills kernel release/version/build id, hostname, CPU model and count,
// virtualization and the tool version. Sources that cannot be read leave
// their field empty.
void fillSystemMeta(Meta& meta);

} // namespace lockscope::record
