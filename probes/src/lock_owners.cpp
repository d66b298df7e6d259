// SPDX-License-Identifier: GPL-2.0-or-later
#include "lock_owners.h"

#include <algorithm>
#include <cstring>
#include <map>
#include <tuple>

#include <bpf/bpf.h>

namespace lockscope::probes::detail {

namespace {

// lock, wait stack, tgid, tid, stack, cgroup
using OwnerKey = std::tuple<uint64_t, int64_t, uint32_t, uint32_t, uint64_t, uint64_t>;

std::vector<uint64_t> ownerStack(int fd, uint64_t key)
{
    ls_owner_stack s {};
    if (key == 0 || bpf_map_lookup_elem(fd, &key, &s) != 0)
        return {};
    const uint32_t nr = std::min<uint32_t>(s.nr, LS_OWNER_DEPTH);
    return { s.ips, s.ips + nr };
}

std::string ownerComm(int fd, uint32_t tid)
{
    ls_owner_comm c {};
    if (bpf_map_lookup_elem(fd, &tid, &c) != 0)
        return {};
    return std::string(c.comm, strnlen(c.comm, sizeof c.comm));
}

} // namespace

std::vector<OwnerRecord> readOwners(const OwnerMapFds& fds, const std::vector<ls_wait_done>& undrained)
{
    std::map<OwnerKey, std::pair<uint64_t, uint64_t>> sums; // count, wait_ns
    ls_owner_key key {}, next {};
    ls_holder_val value {};
    const void* prev = nullptr;
    while (bpf_map_get_next_key(fds.owners, prev, &next) == 0) {
        key = next;
        prev = &key;
        if (bpf_map_lookup_elem(fds.owners, &key, &value) != 0 || value.count == 0)
            continue;
        auto& s = sums[{ key.lock, key.wait_kstack, key.tgid, key.owner_tid, key.owner_stack, key.cgroup }];
        s.first += value.count;
        s.second += value.wait_ns;
    }
    for (const ls_wait_done& d : undrained) {
        if (d.owner_tid == 0)
            continue;
        auto& s = sums[{ d.lock, d.kstack, d.tgid, d.owner_tid, d.owner_stack, d.cgroup }];
        s.first += 1;
        s.second += d.delta;
    }
    std::vector<OwnerRecord> out;
    out.reserve(sums.size());
    for (const auto& [k, s] : sums) {
        const auto& [lock, waitStack, tgid, tid, stack, cgroup] = k;
        out.push_back(OwnerRecord { lock, waitStack, tgid, tid, ownerComm(fds.owner_comms, tid),
            ownerStack(fds.owner_stacks, stack), s.first, s.second, cgroup });
    }
    return out;
}

} // namespace lockscope::probes::detail
