// SPDX-License-Identifier: GPL-2.0-or-later
#pragma once

#include <string>

#include "lockscope/capture/capture.h"

// How far a capture's times hold, from where it was recorded
// (Meta::virtualization): the one rule every report, compare and the GUI use.
namespace lockscope {

// "bare metal", "a KVM guest", "a TCG-emulated guest (multi-threaded), 4 vCPUs
// on 2 host cores, host load 3.4"; "" when not recorded.
std::string describeVirtualization(const Virtualization& v);

// Every instruction emulated: times scale with the host, not the kernel.
bool timesEmulated(const Virtualization& v);

// More vCPUs than host cores, or a host loaded past its cores during the
// run: a lock holder's vCPU thread can be descheduled by the host.
bool vcpusOvercommitted(const Virtualization& v);

// "" or the one plain line a report prints: where it was recorded, then
// "waits include vCPU preemption by the host: compare shapes and counts, not
// absolute times".
std::string timesCaveat(const Virtualization& v);

// "" or the line compare prints when the two sides were recorded differently
// (another kind of machine, another vCPU or host core count). Sides that do
// not say (older captures) are not judged.
std::string recordedDifferently(const Virtualization& before, const Virtualization& after);

} // namespace lockscope
