// SPDX-License-Identifier: GPL-2.0-or-later
#include <algorithm>
#include <functional>
#include <type_traits>

#include "compare_internal.h"

namespace lockscope::reports::detail {

namespace {
void addLatency(std::vector<LatencyEntry>& out, std::map<std::string, size_t>& index,
                const std::vector<LatencyEntry>& in)
{
    for (const auto& e : in) {
        const auto [it, inserted] = index.try_emplace(e.name, out.size());
        if (inserted) {
            out.push_back(e);
            continue;
        }
        // Every call is counted (calls() of each run); the coarsest sampling names the pool's.
        LatencyEntry& m = out[it->second];
        const uint64_t calls = m.calls() + e.calls();
        m.latency.merge(e.latency);
        m.errors += e.errors;
        m.sample_period = std::max(m.sample_period, e.sample_period);
        m.all_calls = m.sample_period > 1 ? calls : 0;
    }
}

// Over what makes two stacks the same (kind and frames), not the id.
uint64_t hashStack(const Stack& s)
{
    uint64_t h = mix64(uint64_t(s.kind));
    for (const Frame& f : s.frames)
        h = mix64(h ^ std::hash<InternedString>()(f.function) ^ mix64(std::hash<InternedString>()(f.module)) ^
                  mix64(f.offset) ^ mix64(f.address.value_or(0) + f.address.has_value()));
    return h;
}

void mergeLock(Lock& m, const Lock& l)
{
    m.wait.merge(l.wait);
    m.wait_untimed += l.wait_untimed;
    m.hold.merge(l.hold);
    m.acquire.merge(l.acquire);
    m.aborted += l.aborted;
    m.instances = std::max(m.instances, l.instances);
}
} // namespace

// Run is Capture (take: stacks, sites and CPU stacks are moved out) or
// const Capture (add: they are copied); std::move of a const member copies.
template <class Run>
void PoolBuilder::fold(Run& run)
{
    if (!runs_++)
        firstRun(run);
    pool_.meta.duration_s += run.meta.duration_s;
    pool_.stats += run.stats;
    ids_ = FlatIndex(run.stacks.size());
    uint32_t next = offset_;
    for (auto& s : run.stacks) {
        const uint32_t runId = s.id;
        next = std::max(next, runId + offset_ + 1);
        ids_.tryEmplace(runId, poolStack(std::move(s), runId + offset_));
    }
    for (auto& l : run.locks) {
        std::vector<LockSite> sites = std::move(l.sites);
        if constexpr (!std::is_const_v<Run>)
            l.sites = {};
        foldLock(l, std::move(sites));
    }
    addLatency(pool_.syscalls, syscallIndex_, run.syscalls);
    addLatency(pool_.functions, functionIndex_, run.functions);
    foldCpu(run.cpu);
    if constexpr (!std::is_const_v<Run>) {
        run.stacks = {};
        run.cpu.stacks = {};
    }
    offset_ = next;
}

void PoolBuilder::firstRun(const Capture& run)
{
    pool_.meta = run.meta;
    pool_.meta.duration_s = 0.0;
    pool_.probes = run.probes;
    pool_.workload = run.workload;
    pool_.cpu.frequency_hz = run.cpu.frequency_hz;
}

// A stack equal to one already pooled shares its id: runs of one workload
// repeat most stacks, and the pool holds each once.
template <class S>
uint32_t PoolBuilder::poolStack(S&& s, uint32_t id)
{
    const uint64_t h = hashStack(s);
    const auto [first, last] = stacksByHash_.equal_range(h);
    for (auto it = first; it != last; ++it) {
        const Stack& p = pool_.stacks[it->second];
        if (p.kind == s.kind && p.frames == s.frames)
            return p.id;
    }
    stacksByHash_.emplace(h, uint32_t(pool_.stacks.size()));
    Stack& p = pool_.stacks.emplace_back(std::forward<S>(s));
    p.id = id;
    return id;
}

// Ids a run's sites name without a stack are shifted by the run's offset.
uint32_t PoolBuilder::stackId(uint32_t runId) const
{
    return ids_.find(runId).value_or(runId + offset_);
}

void PoolBuilder::foldLock(const Lock& l, std::vector<LockSite> sites)
{
    const auto [it, inserted] = lockIndex_.try_emplace(l.key, pool_.locks.size());
    if (inserted) {
        pool_.locks.push_back(l);
        pool_.locks.back().sites.clear();
        pool_.locks.back().sites.reserve(sites.size() * std::max(expected_runs_, runs_));
    } else {
        mergeLock(pool_.locks[it->second], l);
    }
    Lock& m = pool_.locks[it->second];
    for (LockSite& site : sites) {
        site.stack_id = stackId(site.stack_id);
        if (site.user_stack_id)
            *site.user_stack_id = stackId(*site.user_stack_id);
        for (auto& h : site.holders)
            h.stack_id = stackId(h.stack_id);
        m.sites.push_back(std::move(site));
    }
}

void PoolBuilder::foldCpu(const CpuProfile& cpu)
{
    pool_.cpu.samples += cpu.samples;
    pool_.cpu.lock_samples += cpu.lock_samples;
    pool_.cpu.idle_samples += cpu.idle_samples;
    for (const auto& l : cpu.top_leaves)
        leaves_[{l.function, l.module}] += l.samples;
    for (StackCount sc : cpu.stacks) {
        sc.stack_id = stackId(sc.stack_id);
        pool_.cpu.stacks.push_back(sc);
    }
}

void PoolBuilder::add(const Capture& run)
{
    fold(run);
}

void PoolBuilder::take(Capture& run)
{
    fold(run);
}

Capture PoolBuilder::finish()
{
    for (const auto& [fm, n] : leaves_)
        pool_.cpu.top_leaves.push_back(LeafShare{fm.first, fm.second, n});
    std::stable_sort(pool_.cpu.top_leaves.begin(), pool_.cpu.top_leaves.end(),
                     [](const LeafShare& a, const LeafShare& b) { return a.samples > b.samples; });
    return std::move(pool_);
}

Capture poolRuns(const std::vector<const Capture*>& runs)
{
    PoolBuilder b(runs.size());
    for (const Capture* run : runs)
        b.add(*run);
    return b.finish();
}

DataQuality dataQuality(const std::vector<const Capture*>& runs)
{
    DataQuality q;
    for (const Capture* run : runs) {
        q.events += run->stats.events;
        q.lost += run->stats.lost;
        q.stack_failures += run->stats.stack_failures;
        q.waits_untimed += run->stats.waits_untimed;
        for (const auto& l : run->locks)
            q.waits += l.wait.count();
    }
    return q;
}

} // namespace lockscope::reports::detail
