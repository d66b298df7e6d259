// SPDX-License-Identifier: GPL-2.0-or-later
#include "lockscope/agent/capture_sum.h"

#include <algorithm>

#include "lockscope/capture/lock_frames.h"
#include "lockscope/capture/tail_basis.h"

namespace lockscope::agent {

Stack CaptureSum::kept(const Stack& s) const
{
    if (!limits_.fold_interrupted || s.kind != StackKind::Kernel)
        return s;
    const auto entry = std::find_if(s.frames.begin(), s.frames.end(),
                                    [](const Frame& f) { return isAsyncInterruptEntry(f.function); });
    if (entry == s.frames.end() || entry + 1 == s.frames.end())
        return s;
    Stack cut{s.id, s.kind, {s.frames.begin(), entry + 1}};
    cut.frames.push_back(Frame{kInterruptedFrame, 0, "", {}});
    return cut;
}

uint32_t CaptureSum::stackId(const StackIndex& slice, uint32_t sliceId, SliceStacks& seen)
{
    if (auto it = seen.find(sliceId); it != seen.end())
        return it->second;
    const Stack* s = slice.find(sliceId);
    std::optional<uint32_t> id = stacks_.intern(s ? kept(*s) : Stack{});
    if (!id) {
        ++stacksNotKept_;
        if (!fullStack_)
            fullStack_ = stacks_.intern(Stack{0, StackKind::Kernel, {Frame{kStackTableFullFrame, 0, "", {}}}}, true);
        return *fullStack_; // not remembered in seen: each site filed there counts
    }
    seen.emplace(sliceId, *id);
    return *id;
}

size_t CaptureSum::lockFor(const Lock& l)
{
    const std::string id = l.key + '\n' + l.cgroup;
    if (auto it = lockIndex_.find(id); it != lockIndex_.end())
        return it->second;
    Lock fresh;
    std::string freshId = id;
    if (lockIndex_.size() >= limits_.max_locks) {
        ++locksFolded_;
        freshId = std::string(kOtherLocksKey) + '\n';
        if (auto it = lockIndex_.find(freshId); it != lockIndex_.end())
            return it->second;
        fresh.key = kOtherLocksKey;
        fresh.type = "mixed";
    } else {
        fresh.key = l.key;
        fresh.type = l.type;
        fresh.name = l.name;
        fresh.cgroup = l.cgroup;
        fresh.address = l.address;
        fresh.instances = 0;
    }
    lockIndex_.emplace(std::move(freshId), sum_.locks.size());
    sum_.locks.push_back(std::move(fresh));
    sites_.emplace_back();
    return sum_.locks.size() - 1;
}

void CaptureSum::addLock(const StackIndex& slice, const Lock& l, SliceStacks& seen)
{
    const size_t at = lockFor(l);
    Lock& into = sum_.locks[at];
    if (into.address != l.address)
        into.address.reset(); // many instances: no one address stands for it
    into.instances = std::max(into.instances, l.instances);
    if (into.name.empty())
        into.name = l.name;
    into.aborted += l.aborted;
    into.wait.merge(l.wait);
    into.wait_untimed += l.wait_untimed;
    into.hold.merge(l.hold);
    into.acquire.merge(l.acquire);
    Sites& sites = sites_[at];
    for (const LockSite& site : l.sites) {
        Site key;
        key.stack = stackId(slice, site.stack_id, seen);
        if (site.user_stack_id)
            key.user = stackId(slice, *site.user_stack_id, seen);
        const uint64_t packed = (uint64_t(key.stack) << 32) | (key.user ? *key.user : UINT32_MAX);
        const auto [it, fresh] = sites.index.try_emplace(packed, sites.list.size());
        if (fresh)
            sites.list.push_back(std::move(key));
        Site& into_site = sites.list[it->second];
        into_site.wait.merge(site.wait);
        into_site.wait_untimed += site.wait_untimed;
        into_site.hold.merge(site.hold);
        into_site.acquire.merge(site.acquire);
        addHolders(slice, site.holders, into_site, seen);
    }
}

void CaptureSum::addHolders(const StackIndex& slice, const std::vector<Holder>& from, Site& into, SliceStacks& seen)
{
    for (const Holder& h : from) {
        Holder key(stackId(slice, h.stack_id, seen), 0, 0, h.owner_tid, h.owner_comm);
        auto it = std::find_if(into.holders.begin(), into.holders.end(), [&](const Holder& x) {
            return x.stack_id == key.stack_id && x.owner_tid == key.owner_tid && x.owner_comm == key.owner_comm;
        });
        if (it == into.holders.end() && ownersKept_ >= limits_.max_owners) {
            ++ownersFolded_;
            const Stack notKept{0, StackKind::Kernel, {Frame{kOwnersNotKeptFrame, 0, "", {}}}};
            key = Holder(*stacks_.intern(notKept, true), 0, 0);
            it = std::find_if(into.holders.begin(), into.holders.end(), [&](const Holder& x) {
                return x.stack_id == key.stack_id && !x.owner_tid;
            });
        }
        if (it == into.holders.end()) {
            ++ownersKept_;
            it = into.holders.insert(into.holders.end(), std::move(key));
        }
        it->count += h.count;
        it->wait_ns += h.wait_ns;
    }
}

void CaptureSum::addCpu(const Capture& slice, const StackIndex& stacks, SliceStacks& seen)
{
    CpuProfile& cpu = sum_.cpu;
    const CpuProfile& from = slice.cpu;
    cpu.frequency_hz = std::max(cpu.frequency_hz, from.frequency_hz);
    cpu.samples += from.samples;
    cpu.lock_samples += from.lock_samples;
    cpu.idle_samples += from.idle_samples;
    if (from.bpf_samples)
        cpu.bpf_samples = cpu.bpf_samples.value_or(0) + *from.bpf_samples;
    for (const LeafShare& leaf : from.top_leaves) {
        auto it = std::find_if(cpu.top_leaves.begin(), cpu.top_leaves.end(), [&](const LeafShare& x) {
            return x.function == leaf.function && x.module == leaf.module;
        });
        if (it == cpu.top_leaves.end())
            cpu.top_leaves.push_back(leaf);
        else
            it->samples += leaf.samples;
    }
    std::sort(cpu.top_leaves.begin(), cpu.top_leaves.end(),
              [](const LeafShare& a, const LeafShare& b) { return a.samples > b.samples; });
    if (cpu.top_leaves.size() > 25)
        cpu.top_leaves.resize(25);
    if (!limits_.cpu_stacks)
        return;
    for (const StackCount& sc : from.stacks) {
        const uint32_t id = stackId(stacks, sc.stack_id, seen);
        auto it = std::find_if(cpu.stacks.begin(), cpu.stacks.end(), [&](const StackCount& x) { return x.stack_id == id; });
        if (it == cpu.stacks.end())
            cpu.stacks.push_back({id, sc.count});
        else
            it->count += sc.count;
    }
}

void CaptureSum::addLatencies(std::vector<LatencyEntry>& into, const std::vector<LatencyEntry>& from)
{
    for (const LatencyEntry& e : from) {
        auto it = std::find_if(into.begin(), into.end(), [&](const LatencyEntry& x) { return x.name == e.name; });
        if (it == into.end()) {
            into.push_back(e);
            continue;
        }
        it->latency.merge(e.latency);
        it->errors += e.errors;
        it->all_calls += e.all_calls;
        it->sample_period = std::max(it->sample_period, e.sample_period);
    }
}

// The sum's share of time the waits were sampled, weighted by duration; the
// attached seconds kept exact, not re-read from the text of the last share.
void CaptureSum::addWaitShare(const Meta& slice)
{
    waitAttachedSeconds_ += waitShare(slice) * slice.duration_s;
    const double seconds = sum_.meta.duration_s + slice.duration_s;
    if (seconds > 0 && waitAttachedSeconds_ < seconds)
        markWaitsSampled(sum_.meta, waitAttachedSeconds_ / seconds);
}

void CaptureSum::add(const Capture& slice)
{
    if (intervals_ == 0) {
        sum_.meta = slice.meta;
        sum_.meta.duration_s = 0;
    }
    ++intervals_;
    addWaitShare(slice.meta);
    sum_.meta.duration_s += slice.meta.duration_s;
    sum_.probes = slice.probes;
    sum_.stats += slice.stats;
    const StackIndex stacks(slice);
    SliceStacks seen;
    for (const Lock& l : slice.locks)
        addLock(stacks, l, seen);
    addCpu(slice, stacks, seen);
    addLatencies(sum_.syscalls, slice.syscalls);
    addLatencies(sum_.functions, slice.functions);
}

Capture CaptureSum::capture() const
{
    Capture c = sum_;
    std::vector<uint32_t> named;
    for (size_t i = 0; i < c.locks.size(); ++i)
        for (const Site& s : sites_[i].list) {
            LockSite site;
            site.stack_id = s.stack;
            site.user_stack_id = s.user;
            site.wait = s.wait;
            site.wait_untimed = s.wait_untimed;
            site.hold = s.hold;
            site.acquire = s.acquire;
            site.holders = s.holders;
            std::stable_sort(site.holders.begin(), site.holders.end(),
                             [](const Holder& a, const Holder& b) { return a.wait_ns > b.wait_ns; });
            for (const Holder& h : s.holders)
                named.push_back(h.stack_id);
            c.locks[i].sites.push_back(std::move(site));
            named.push_back(s.stack);
            if (s.user)
                named.push_back(*s.user);
        }
    for (const StackCount& sc : c.cpu.stacks)
        named.push_back(sc.stack_id);
    std::sort(named.begin(), named.end());
    named.erase(std::unique(named.begin(), named.end()), named.end());
    c.stacks.reserve(named.size());
    for (uint32_t id : named)
        c.stacks.push_back(stacks_.stack(id));
    return c;
}

} // namespace lockscope::agent
