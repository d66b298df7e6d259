// SPDX-License-Identifier: GPL-2.0-or-later
#pragma once

// The ended waits wait.bpf.c leaves in per-CPU rings for the next
// contention_begin to add (ls_wait_done_ring): after the programs detach,
// the last few of every CPU are still there, and userspace adds them.

#include <cstdint>
#include <vector>

#include "lockscope/probes/probes.h"
#include "lockscope_bpf.h"

namespace lockscope::probes::detail {

// An empty record keyed like a wait's histogram: from an ls_wait_key or an
// ls_wait_done, which share these fields.
template <class Key> LockRecord waitRecordOf(const Key& k)
{
    LockRecord r;
    r.lock_addr = k.lock;
    r.kstack_id = k.kstack;
    r.ustack_id = k.ustack;
    r.flags = k.flags;
    r.tgid = k.tgid;
    r.type = lockTypeName(k.flags);
    return r;
}

// Every CPU's pending entries, oldest first; a ring whose indices make no
// sense (read mid-update) contributes nothing.
std::vector<ls_wait_done> undrainedWaits(int ring_map_fd);

// Adds them to the records read from the histogram map, waits[first..] (an
// entry with the same key joins its record, else starts one), and their
// holders; returns how many were added.
uint64_t addUndrained(const std::vector<ls_wait_done>& done, std::vector<LockRecord>& waits, size_t first,
    std::vector<HolderRecord>& holders);

} // namespace lockscope::probes::detail
