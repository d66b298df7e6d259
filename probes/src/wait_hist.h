// SPDX-License-Identifier: GPL-2.0-or-later
#pragma once

// Wait histograms as wait.bpf.c leaves them, before they become LockRecords.
// Three things are not in the histogram map yet: the ended waits still in the
// per-CPU rings for the next contention_begin to add (ls_wait_done_ring: after
// the programs detach, the last few of every CPU), the untimed waits counted
// per CPU at their begin and not yet flushed (ls_wait_counts), and the times
// of untimed waits (timing budget), which the map only counts.

#include <cstdint>
#include <vector>

#include "bpf_util.h"
#include "lockscope/probes/probes.h"
#include "lockscope_bpf.h"
#include "untimed_hist.h"

namespace lockscope::probes::detail {

// An empty record keyed like a wait's histogram: from an ls_wait_key or an
// ls_wait_done, which share these fields.
template <class Key> LockRecord waitRecordOf(const Key& k)
{
    LockRecord r;
    r.lock_addr = k.lock;
    r.kstack_id = k.kstack;
    r.ustack_id = k.ustack;
    r.flags = k.flags & ~LS_WAIT_F_GEN;
    r.tgid = k.tgid;
    r.type = lockTypeName(r.flags);
    r.cgroup = k.cgroup;
    return r;
}

// One key's histogram summed over CPUs: count is every wait, the slots and
// total only the timed ones.
struct RawWait {
    LockRecord record; // key fields; hist is filled by finishWaits
    ls_hist hist {};
};

// The histogram map (waits), summed over CPUs and over both drain
// generations (LS_WAIT_F_GEN).
std::vector<RawWait> readWaits(int waits_map_fd);

// Moves *gen (wait.bpf.c's wait_gen) on and waits until no program still
// files into the generation just closed (membarrier; refused: not settled).
ClosedGeneration closeWaitGeneration(volatile uint32_t* gen);

// What the programs filed in the closed generation (LS_WAIT_F_GEN), as
// drainGeneration takes it.
std::vector<RawWait> drainWaits(int waits_map_fd, ClosedGeneration closed);

// Every CPU's pending entries, oldest first; a ring whose indices make no
// sense (read mid-update) contributes nothing.
std::vector<ls_wait_done> undrainedWaits(int ring_map_fd);

// Adds them to waits (an entry with the same key joins it, else starts one)
// and their holders; returns how many were added.
uint64_t addUndrained(const std::vector<ls_wait_done>& done, std::vector<RawWait>& waits,
    std::vector<HolderRecord>& holders);

// Every CPU's untimed waits counted (by their begin or their end) and not yet
// in the histogram map (ls_wait_counts); like undrainedWaits, exact once detached.
std::vector<ls_wait_count> pendingCounts(int counts_map_fd);

struct PendingCounts {
    uint64_t waits = 0;
    uint64_t unsampled = 0; // of them, under the unsampled stack (stacks on)
};

// Adds them to waits' counts (an entry with the same key joins it, else
// starts one).
PendingCounts addPendingCounts(const std::vector<ls_wait_count>& counts, std::vector<RawWait>& waits);

struct UntimedWaits {
    uint64_t spread = 0;   // given the times of timed waits on the same key or lock
    uint64_t unplaced = 0; // no timed wait on their lock to take times from: left out
};

// Folds the waits a tick went by in (LS_WAIT_F_TICKED: every one timed,
// kept apart from the sample) back into their keys' histograms: the ones an
// untimed wait's begin counted already lend their count back. Then spreads each key's
// untimed waits over its histogram like the timed waits weighted by the
// untimed ones each stands for (LS_WAIT_F_WEIGHTED, of the same key, else of
// the same lock and flags); without those (a window drained between a
// timed wait and the untimed ones after it), like the key's own timed waits, else those of the same lock and
// flags, else of the same lock (untimed waits are never walked, so they sit
// under the unsampled stack while the timed ones of their lock may all have
// been walked, and a mutex's sleeps and spins differ by orders of
// magnitude). Then moves every histogram into its record. Records left
// without any wait are dropped. A drain passes `last`: a lock and flags none
// of whose waits this window timed take the shape they last had (LastShapes).
UntimedWaits finishWaits(std::vector<RawWait>& raw, std::vector<LockRecord>& out, LastShapes* last = nullptr);

} // namespace lockscope::probes::detail
