// SPDX-License-Identifier: GPL-2.0-or-later
#include "lock_owners.h"

#include <algorithm>
#include <cstring>
#include <map>
#include <set>
#include <tuple>

#include <bpf/bpf.h>

#include "bpf_util.h"

namespace lockscope::probes::detail {

namespace {

// lock, wait stack, tgid, tid, stack, cgroup
using OwnerKey = std::tuple<uint64_t, int64_t, uint32_t, uint32_t, uint64_t, uint64_t>;
using OwnerSums = std::map<OwnerKey, std::pair<uint64_t, uint64_t>>; // count, wait_ns

OwnerKey ownerKeyOf(const ls_owner_key& k)
{
    return { k.lock, k.wait_kstack, k.tgid, k.owner_tid, k.owner_stack, k.cgroup };
}

std::vector<uint64_t> stackOf(const ls_owner_stack& s)
{
    const uint32_t nr = std::min<uint32_t>(s.nr, LS_OWNER_DEPTH);
    return { s.ips, s.ips + nr };
}

std::string commOf(const ls_owner_comm& c)
{
    return std::string(c.comm, strnlen(c.comm, sizeof c.comm));
}

std::vector<uint64_t> ownerStack(int fd, uint64_t key, const OwnerDrain* moved)
{
    ls_owner_stack s {};
    if (key == 0)
        return {};
    if (bpf_map_lookup_elem(fd, &key, &s) == 0)
        return stackOf(s);
    const std::vector<uint64_t>* kept = moved ? moved->stack(key) : nullptr;
    return kept ? *kept : std::vector<uint64_t> {};
}

std::string ownerComm(int fd, uint32_t tid, const OwnerDrain* moved)
{
    ls_owner_comm c {};
    if (bpf_map_lookup_elem(fd, &tid, &c) == 0)
        return commOf(c);
    const std::string* kept = moved ? moved->comm(tid) : nullptr;
    return kept ? *kept : std::string();
}

} // namespace

std::vector<OwnerRecord> readOwners(const OwnerMapFds& fds, const std::vector<ls_wait_done>& undrained,
    const OwnerDrain* moved)
{
    OwnerSums sums;
    ls_holder_val value {};
    for (const ls_owner_key& key : keysOf<ls_owner_key>(fds.owners)) {
        if (bpf_map_lookup_elem(fds.owners, &key, &value) != 0 || value.count == 0)
            continue;
        auto& s = sums[ownerKeyOf(key)];
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
        out.push_back(OwnerRecord { lock, waitStack, tgid, tid, ownerComm(fds.owner_comms, tid, moved),
            ownerStack(fds.owner_stacks, stack, moved), s.first, s.second, cgroup });
    }
    return out;
}

std::vector<OwnerRecord> OwnerDrain::drain(const OwnerMapFds& fds, volatile uint32_t* gen,
    const std::vector<ls_wait_done>& parked)
{
    ++drains_;
    const uint32_t closed = *gen;
    const uint32_t open = closed + 1;
    __atomic_store_n(gen, open, __ATOMIC_SEQ_CST);
    // Without a grace period a program may still add to the generation just
    // closed: it is left for the next drain, when none can.
    const bool settled = waitForRunningPrograms();
    // After the grace period: every stack a drained entry names was stored
    // before it, so it is in the kernel's map now or moved here already.
    moveIn(fds);
    OwnerSums sums;
    ls_holder_val value {};
    for (const ls_owner_key& key : keysOf<ls_owner_key>(fds.owners)) {
        if (key.gen == open || (!settled && key.gen == closed))
            continue;
        if (bpf_map_lookup_and_delete_elem(fds.owners, &key, &value) != 0 || value.count == 0)
            continue;
        auto& s = sums[ownerKeyOf(key)];
        s.first += value.count;
        s.second += value.wait_ns;
    }
    for (const ls_wait_done& d : parked) {
        if (auto it = stacks_.find(d.owner_stack); it != stacks_.end())
            it->second.seen = drains_;
        if (auto it = comms_.find(d.owner_tid); it != comms_.end())
            it->second.seen = drains_;
    }
    std::vector<OwnerRecord> out;
    out.reserve(sums.size());
    for (const auto& [k, s] : sums) {
        const auto& [lock, waitStack, tgid, tid, stackKey, cgroup] = k;
        OwnerRecord r { lock, waitStack, tgid, tid, {}, {}, s.first, s.second, cgroup };
        if (auto it = comms_.find(tid); it != comms_.end()) {
            r.owner_comm = it->second.value;
            it->second.seen = drains_;
        }
        if (auto it = stacks_.find(stackKey); it != stacks_.end()) {
            r.owner_stack = it->second.value;
            it->second.seen = drains_;
        } else if (stackKey != 0) {
            stacksLost_ += s.first;
        }
        out.push_back(std::move(r));
    }
    forgetOld();
    return out;
}

void OwnerDrain::matchWaits(std::vector<OwnerRecord>& owners, const std::vector<LockRecord>& waits, bool final)
{
    std::set<std::tuple<uint64_t, int64_t, uint32_t, uint64_t>> sites;
    for (const LockRecord& w : waits)
        sites.insert({ w.lock_addr, w.kstack_id, w.tgid, w.cgroup });
    std::vector<std::pair<OwnerRecord, uint32_t>> candidates = std::move(held_);
    held_.clear();
    for (OwnerRecord& o : owners)
        candidates.emplace_back(std::move(o), 0);
    owners.clear();
    for (auto& [o, drains] : candidates) {
        const bool found = sites.count({ o.lock_addr, o.wait_kstack_id, o.tgid, o.cgroup }) != 0;
        if (found || final || drains >= kHoldDrains)
            owners.push_back(std::move(o));
        else
            held_.emplace_back(std::move(o), drains + 1);
    }
}

// Each entry is read and deleted in one step: a name the programs rewrite
// meanwhile is the next drain's.
void OwnerDrain::moveIn(const OwnerMapFds& fds)
{
    ls_owner_stack s {};
    for (const uint64_t key : keysOf<uint64_t>(fds.owner_stacks))
        if (bpf_map_lookup_and_delete_elem(fds.owner_stacks, &key, &s) == 0)
            stacks_[key] = { stackOf(s), drains_ };
    ls_owner_comm c {};
    for (const uint32_t tid : keysOf<uint32_t>(fds.owner_comms))
        if (bpf_map_lookup_and_delete_elem(fds.owner_comms, &tid, &c) == 0)
            comms_[tid] = { commOf(c), drains_ };
}

namespace {

template <class Map> void forgetUnseen(Map& m, uint64_t now, uint64_t keep, size_t max)
{
    std::erase_if(m, [&](const auto& e) { return now - e.second.seen >= keep; });
    if (m.size() <= max)
        return;
    std::vector<uint64_t> seen;
    seen.reserve(m.size());
    for (const auto& e : m)
        seen.push_back(e.second.seen);
    auto cut = seen.begin() + static_cast<std::ptrdiff_t>(m.size() - max);
    std::nth_element(seen.begin(), cut, seen.end());
    std::erase_if(m, [&](const auto& e) { return e.second.seen < *cut; });
}

} // namespace

void OwnerDrain::forgetOld()
{
    forgetUnseen(stacks_, drains_, kKeepDrains, kMaxKept);
    forgetUnseen(comms_, drains_, kKeepDrains, kMaxKept);
}

const std::vector<uint64_t>* OwnerDrain::stack(uint64_t key) const
{
    const auto it = stacks_.find(key);
    return it == stacks_.end() ? nullptr : &it->second.value;
}

const std::string* OwnerDrain::comm(uint32_t tid) const
{
    const auto it = comms_.find(tid);
    return it == comms_.end() ? nullptr : &it->second.value;
}

} // namespace lockscope::probes::detail
