// SPDX-License-Identifier: GPL-2.0-or-later
#pragma once

// Maps common to every probe family, created once here and handed to each
// skeleton before load, so that stack ids, filters and counters are shared.

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "bpf_util.h"
#include "lockscope/probes/probes.h"
#include "lockscope_bpf.h"

struct bpf_object;

namespace lockscope::probes::detail {

class SharedMaps {
public:
    // Throws ProbeError if the maps cannot be created.
    explicit SharedMaps(const Options& options);
    ~SharedMaps();
    SharedMaps(const SharedMaps&) = delete;
    SharedMaps& operator=(const SharedMaps&) = delete;

    // Points the skeleton's stacks (the family's own stack map, see
    // ls_stack_map)/stacks_spill/filter_tgids/filter_addrs/counters/runtime (and, with
    // holder stacks, held) at ours. Returns a negative errno on failure.
    int reuseIn(bpf_object* obj, ls_stack_map stacks = LS_STACKS_WAIT) const;

    // Adds tgid to the filter and turns the filter on.
    void addTgid(uint32_t tgid) const;
    // Lets contention_begin scan the hold probe's held stacks (once it is attached).
    void enableHolderScan() const;
    uint64_t counter(ls_counter c) const;
    // The frames of a stack id from any family's map (the id names its map).
    std::vector<uint64_t> stack(int64_t id) const;
    // Deletes a stack id from its map, so a long-running reader keeps the
    // maps from filling with stacks no longer taken.
    void forgetStack(int64_t id) const;

    int ncpus() const { return ncpus_; }
    uint32_t stackDepth() const { return depth_; }

private:
    int stacks_[LS_STACKS_NR] = { -1, -1, -1, -1 };
    int tgids_ = -1;
    int addrs_ = -1;
    int counters_ = -1;
    int runtime_ = -1;
    int held_ = -1;     // the hold probe's per-CPU held stacks, read by the wait probe; -1 unless holder stacks
    int released_ = -1; // the hold probe's per-CPU rings of recent releases; likewise
    int ncpus_ = 1;
    uint32_t depth_ = 0;
};

// Filter and keying settings, written into a skeleton's read-only data
// before load. Every skeleton includes common.bpf.h, so the fields match.
template <class Rodata> void configureRodata(Rodata* ro, const Options& o)
{
    ro->filter_addr_on = !o.lock_addrs.empty();
    ro->filter_comm_on = !o.comm.empty();
    for (size_t i = 0; i < LS_COMM_LEN; ++i)
        ro->filter_comm[i] = i < o.comm.size() && i < LS_COMM_LEN - 1 ? o.comm[i] : '\0';
    ro->filter_flags_mask = o.lock_flags_mask;
    ro->per_tgid = o.per_tgid;
    ro->per_cgroup = o.per_cgroup;
    ro->filter_cgroup = o.cgroup_id;
    ro->filter_cgroup_level = o.cgroup_level;
    ro->stacks_on = o.stack_depth > 0;
    ro->user_stacks_on = o.user_stacks && o.stack_depth > 0;
}

// The stack budget of a skeleton that includes stack_budget.bpf.h (the wait
// and the hold probe, each with its own per-CPU state).
template <class Rodata> void configureStackBudget(Rodata* ro, const Options& o)
{
    ro->stack_sample = std::max<uint32_t>(1, o.stack_sample);
    ro->stack_window_walks = stackWindowWalks(o.stack_budget);
}

// A family with its own stack map: the tag its stack ids carry, and the map.
template <class Skel> int useStackMap(Skel* skel, const SharedMaps& maps, ls_stack_map which)
{
    skel->rodata->stack_tag = which;
    return maps.reuseIn(skel->obj, which);
}

// The stack id a hold or acquire table key's 16-bit stack field stands for
// (hold_sid in hold_common.bpf.h), its map's tag back on.
inline int64_t stackOfHoldSid(uint16_t sid)
{
    if (sid == LS_HOLD_SID_UNSAMPLED)
        return LS_STACK_UNSAMPLED;
    if (sid == 0)
        return -1;
    if (sid >= LS_HOLD_SID_SPILL)
        return int64_t { sid - LS_HOLD_SID_SPILL } | (int64_t { LS_STACKS_SPILL } << LS_STACK_TAG_SHIFT);
    return int64_t { sid - 1 } | (int64_t { LS_STACKS_HOLD } << LS_STACK_TAG_SHIFT);
}

// Lock-internal frames (the contention tracepoint's own callers, queued
// spinlock slow paths) are kept so record can skip them by name.
inline constexpr uint32_t kInternalFrames = 8;

} // namespace lockscope::probes::detail
