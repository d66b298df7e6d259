// SPDX-License-Identifier: GPL-2.0-or-later
#include "lockscope/agent/capture_sum.h"

#include <algorithm>

namespace lockscope::agent {

uint32_t CaptureSum::stackId(const Capture& slice, uint32_t sliceId)
{
    const Stack* s = slice.findStack(sliceId);
    StackKey key{s ? int(s->kind) : 0, {}};
    if (s)
        for (const Frame& f : s->frames)
            key.second.emplace_back(f.function, f.offset, f.module);
    if (auto it = stackIds_.find(key); it != stackIds_.end())
        return it->second;
    if (stackIds_.size() >= limits_.max_stacks) {
        ++stacksNotKept_;
        if (!fullStack_) {
            fullStack_ = uint32_t(sum_.stacks.size());
            sum_.stacks.push_back(Stack{*fullStack_, StackKind::Kernel, {Frame{kStackTableFullFrame, 0, "", {}}}});
        }
        return *fullStack_;
    }
    const auto id = uint32_t(sum_.stacks.size());
    Stack copy = s ? *s : Stack{};
    copy.id = id;
    sum_.stacks.push_back(std::move(copy));
    stackIds_.emplace(std::move(key), id);
    return id;
}

Lock& CaptureSum::lockFor(const Lock& l)
{
    const std::string id = l.key + '\n' + l.cgroup;
    if (auto it = lockIndex_.find(id); it != lockIndex_.end())
        return sum_.locks[it->second];
    if (lockIndex_.size() >= limits_.max_locks) {
        ++locksFolded_;
        Lock other;
        other.key = kOtherLocksKey;
        other.type = "mixed";
        const std::string otherId = std::string(kOtherLocksKey) + '\n';
        if (auto it = lockIndex_.find(otherId); it != lockIndex_.end())
            return sum_.locks[it->second];
        lockIndex_.emplace(otherId, sum_.locks.size());
        return sum_.locks.emplace_back(std::move(other));
    }
    Lock fresh;
    fresh.key = l.key;
    fresh.type = l.type;
    fresh.name = l.name;
    fresh.cgroup = l.cgroup;
    fresh.address = l.address;
    fresh.instances = 0;
    lockIndex_.emplace(id, sum_.locks.size());
    return sum_.locks.emplace_back(std::move(fresh));
}

void CaptureSum::addLock(const Capture& slice, const Lock& l)
{
    Lock& into = lockFor(l);
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
    for (const LockSite& site : l.sites) {
        const uint32_t stack = stackId(slice, site.stack_id);
        std::optional<uint32_t> user;
        if (site.user_stack_id)
            user = stackId(slice, *site.user_stack_id);
        auto it = std::find_if(into.sites.begin(), into.sites.end(), [&](const LockSite& s) {
            return s.stack_id == stack && s.user_stack_id == user;
        });
        if (it == into.sites.end()) {
            LockSite fresh;
            fresh.stack_id = stack;
            fresh.user_stack_id = user;
            into.sites.push_back(std::move(fresh));
            it = into.sites.end() - 1;
        }
        it->wait.merge(site.wait);
        it->wait_untimed += site.wait_untimed;
        it->hold.merge(site.hold);
        it->acquire.merge(site.acquire);
    }
}

void CaptureSum::addCpu(const Capture& slice)
{
    CpuProfile& cpu = sum_.cpu;
    const CpuProfile& from = slice.cpu;
    cpu.frequency_hz = std::max(cpu.frequency_hz, from.frequency_hz);
    cpu.samples += from.samples;
    cpu.lock_samples += from.lock_samples;
    cpu.idle_samples += from.idle_samples;
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
        const uint32_t id = stackId(slice, sc.stack_id);
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

void CaptureSum::add(const Capture& slice)
{
    if (intervals_ == 0) {
        sum_.meta = slice.meta;
        sum_.meta.duration_s = 0;
    }
    ++intervals_;
    sum_.meta.duration_s += slice.meta.duration_s;
    sum_.probes = slice.probes;
    sum_.stats += slice.stats;
    for (const Lock& l : slice.locks)
        addLock(slice, l);
    addCpu(slice);
    addLatencies(sum_.syscalls, slice.syscalls);
    addLatencies(sum_.functions, slice.functions);
}

} // namespace lockscope::agent
