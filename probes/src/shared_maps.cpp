// SPDX-License-Identifier: GPL-2.0-or-later
#include "shared_maps.h"

#include <algorithm>
#include <cerrno>
#include <fstream>

#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "bpf_util.h"

namespace lockscope::probes::detail {

namespace {

uint32_t maxStackDepth()
{
    std::ifstream in("/proc/sys/kernel/perf_event_max_stack");
    uint32_t v = 127;
    if (!(in >> v) || v == 0)
        v = 127;
    return v;
}

int createMap(bpf_map_type type, const char* name, uint32_t key, uint32_t value, uint32_t entries)
{
    int fd = bpf_map_create(type, name, key, value, entries, nullptr);
    if (fd < 0)
        throw ProbeError(std::string("lockscope: cannot create BPF map ") + name + ": " + errnoText(errno));
    return fd;
}

} // namespace

SharedMaps::SharedMaps(const Options& options)
{
    ncpus_ = possibleCpus();
    depth_ = std::min(std::max(options.stack_depth, 1u) + kInternalFrames, maxStackDepth());
    // Ids must fit the 16 bits the hold table packs them into (the hold tag is
    // added back when the table is read). The hold probe and the CPU sampler
    // see every kernel path that takes a spinlock or runs: more room.
    const uint32_t value = depth_ * static_cast<uint32_t>(sizeof(uint64_t));
    stacks_[LS_STACKS_WAIT] = createMap(BPF_MAP_TYPE_STACK_TRACE, "ls_stacks", sizeof(uint32_t), value, 16384);
    stacks_[LS_STACKS_HOLD] = createMap(BPF_MAP_TYPE_STACK_TRACE, "ls_hold_stacks", sizeof(uint32_t), value, 32768);
    stacks_[LS_STACKS_CPU] = createMap(BPF_MAP_TYPE_STACK_TRACE, "ls_cpu_stacks", sizeof(uint32_t), value, 32768);
    stacks_[LS_STACKS_SPILL]
        = createMap(BPF_MAP_TYPE_STACK_TRACE, "ls_spill_stacks", sizeof(uint32_t), value, LS_STACK_SPILL_ENTRIES);
    tgids_ = createMap(BPF_MAP_TYPE_HASH, "ls_tgids", sizeof(uint32_t), sizeof(uint8_t), 8192);
    addrs_ = createMap(BPF_MAP_TYPE_HASH, "ls_addrs", sizeof(uint64_t), sizeof(uint8_t), 1024);
    counters_
        = createMap(BPF_MAP_TYPE_PERCPU_ARRAY, "ls_counters", sizeof(uint32_t), sizeof(uint64_t), LS_C_NR);
    runtime_ = createMap(BPF_MAP_TYPE_ARRAY, "ls_runtime", sizeof(uint32_t), sizeof(uint32_t), LS_RT_NR);
    if (options.holder_stacks) {
        held_ = createMap(BPF_MAP_TYPE_PERCPU_ARRAY, "ls_held", sizeof(uint32_t), sizeof(ls_held_stack), 1);
        released_ = createMap(
            BPF_MAP_TYPE_PERCPU_ARRAY, "ls_released", sizeof(uint32_t), sizeof(ls_released_ring), 1);
    }
    for (uint32_t t : options.tgids)
        addTgid(t);
    const uint8_t one = 1;
    for (uint64_t a : options.lock_addrs)
        if (bpf_map_update_elem(addrs_, &a, &one, BPF_ANY) != 0)
            throw ProbeError("lockscope: too many lock addresses in the filter (max 1024)");
}

SharedMaps::~SharedMaps()
{
    for (int fd : stacks_)
        if (fd >= 0)
            close(fd);
    for (int fd : { tgids_, addrs_, counters_, runtime_, held_, released_ })
        if (fd >= 0)
            close(fd);
}

int SharedMaps::reuseIn(bpf_object* obj, ls_stack_map stacks) const
{
    const std::pair<const char*, int> maps[] = { { "stacks", stacks_[stacks] },
        { "stacks_spill", stacks_[LS_STACKS_SPILL] }, { "filter_tgids", tgids_ },
        { "filter_addrs", addrs_ }, { "counters", counters_ }, { "runtime", runtime_ }, { "held", held_ },
        { "released", released_ } };
    for (const auto& [name, fd] : maps) {
        bpf_map* m = bpf_object__find_map_by_name(obj, name);
        if (!m || fd < 0)
            continue;
        if (int err = bpf_map__reuse_fd(m, fd); err)
            return err;
    }
    return 0;
}

void SharedMaps::addTgid(uint32_t tgid) const
{
    const uint8_t one = 1;
    if (bpf_map_update_elem(tgids_, &tgid, &one, BPF_ANY) != 0)
        throw ProbeError(
            "lockscope: cannot add pid " + std::to_string(tgid) + " to the filter: " + errnoText(errno));
    const uint32_t slot = LS_RT_TGID_FILTER, on = 1;
    bpf_map_update_elem(runtime_, &slot, &on, BPF_ANY);
}

void SharedMaps::enableHolderScan() const
{
    const uint32_t slot = LS_RT_HOLDER_SCAN, on = 1;
    if (held_ < 0)
        throw ProbeError("lockscope: holder scan without the shared held map (Options::holder_stacks off)");
    if (bpf_map_update_elem(runtime_, &slot, &on, BPF_ANY) != 0)
        throw ProbeError("lockscope: cannot turn on the holder scan: " + errnoText(errno));
}

uint64_t SharedMaps::counter(ls_counter c) const
{
    return sumPerCpu(counters_, static_cast<uint32_t>(c), ncpus_);
}

std::vector<uint64_t> SharedMaps::stack(int64_t id) const
{
    if (id < 0 || id > UINT32_MAX)
        return {};
    const uint32_t tag = static_cast<uint32_t>(id) >> LS_STACK_TAG_SHIFT;
    if (tag >= LS_STACKS_NR)
        return {};
    std::vector<uint64_t> ips(depth_);
    const uint32_t key = static_cast<uint32_t>(id) & LS_STACK_ID_MASK;
    if (bpf_map_lookup_elem(stacks_[tag], &key, ips.data()) != 0)
        return {};
    auto end = std::find(ips.begin(), ips.end(), 0u);
    ips.erase(end, ips.end());
    return ips;
}

void SharedMaps::forgetStack(int64_t id) const
{
    if (id < 0 || id > UINT32_MAX)
        return;
    const uint32_t tag = static_cast<uint32_t>(id) >> LS_STACK_TAG_SHIFT;
    if (tag >= LS_STACKS_NR)
        return;
    const uint32_t key = static_cast<uint32_t>(id) & LS_STACK_ID_MASK;
    bpf_map_delete_elem(stacks_[tag], &key);
}

} // namespace lockscope::probes::detail
