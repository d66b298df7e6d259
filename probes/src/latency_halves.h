// SPDX-License-Identifier: GPL-2.0-or-later
#pragma once

// The per-CPU latency arrays of the syscall and function probes
// (syscalls.bpf.c's sc_lat, funcs.bpf.c's fn_lat): two halves of `half`
// slots, calls filed in the half of the probe's generation parity.

#include <cstdint>
#include <optional>

#include "lockscope_bpf.h"

namespace lockscope::probes::detail {

// Slot `slot` of both halves, every CPU summed; nullopt when unreadable.
std::optional<ls_lat_val> readLatencySlot(int fd, uint32_t slot, uint32_t half);

// Slot `slot` of half `closed` (one no program files into any more), every
// CPU summed, then zeroed; nullopt when unreadable.
std::optional<ls_lat_val> takeLatencySlot(int fd, uint32_t slot, uint32_t half, uint32_t closed);

} // namespace lockscope::probes::detail
