// SPDX-License-Identifier: GPL-2.0-or-later
#include <algorithm>
#include <functional>
#include <type_traits>
#include <utility>

#include "compare_internal.h"

namespace lockscope::reports::detail {

namespace {
// Frees what v holds: `v = {}` assigns an empty initializer list, which
// keeps the capacity (each run of a run set kept 5 MB instead of 1).
template <class T> void release(std::vector<T>& v)
{
    std::vector<T>().swap(v);
}

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

// Over what makes two stacks the same (kind and frames), not the id. One
// mix per frame: every stack of every run is hashed.
uint64_t hashStack(const Stack& s)
{
    uint64_t h = uint64_t(s.kind);
    for (const Frame& f : s.frames)
        h = mix64(h ^ std::hash<InternedString>()(f.function) ^ (std::hash<InternedString>()(f.module) << 1) ^
                  (f.offset << 20) ^ (f.address.value_or(0) * 3 + f.address.has_value()));
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
// The run's lock sites, once the pool holds them as SiteShares.
void releaseSites(Capture& run)
{
    for (Lock& l : run.locks)
        release(l.sites);
}
} // namespace

PoolBuilder::Pool PoolBuilder::Pool::ofOneRun(const Capture& run)
{
    Pool p;
    p.sites.reserve(run.locks.size());
    for (const Lock& l : run.locks) {
        auto& sites = p.sites.emplace_back();
        sites.reserve(l.sites.size());
        for (const LockSite& s : l.sites)
            sites.push_back(ownShare(s));
    }
    return p;
}

PoolBuilder::Pool PoolBuilder::Pool::ofOneRun(Capture& run)
{
    Pool p = ofOneRun(std::as_const(run));
    releaseSites(run);
    return p;
}

// Run is Capture (take: stacks are moved out) or const Capture (add: they
// are copied); std::move of a const member copies.
template <class Run>
void PoolBuilder::fold(Run& run)
{
    if (!runs_++)
        firstRun(run);
    Capture& pool = pool_.capture;
    pool.meta.duration_s += run.meta.duration_s;
    pool.stats += run.stats;
    ids_ = FlatIndex(run.stacks.size());
    uint32_t next = offset_;
    for (auto& s : run.stacks) {
        const uint32_t runId = s.id;
        next = std::max(next, runId + offset_ + 1);
        ids_.tryEmplace(runId, poolStack(std::move(s), runId + offset_));
    }
    for (const Lock& l : run.locks)
        foldLock(l);
    addLatency(pool.syscalls, syscallIndex_, run.syscalls);
    addLatency(pool.functions, functionIndex_, run.functions);
    foldCpu(run.cpu);
    if constexpr (!std::is_const_v<Run>) {
        release(run.stacks);
        releaseSites(run);
        release(run.cpu.stacks);
        run.locks.shrink_to_fit(); // kept for the per-run figures: a vector grown by doubling
    }
    offset_ = next;
}

void PoolBuilder::firstRun(const Capture& run)
{
    Capture& pool = pool_.capture;
    pool.meta = run.meta;
    pool.meta.duration_s = 0.0;
    pool.probes = run.probes;
    pool.workload = run.workload;
    pool.cpu.frequency_hz = run.cpu.frequency_hz;
    pool.cpu.bpf_samples = 0; // counted while every run counted it (foldCpu)
}

// A stack equal to one already pooled shares its id: runs of one workload
// repeat most stacks, and the pool holds each once.
template <class S>
uint32_t PoolBuilder::poolStack(S&& s, uint32_t id)
{
    std::vector<Stack>& stacks = pool_.capture.stacks;
    const auto pos = uint32_t(stacks.size());
    const auto [first, inserted] = byHash_.tryEmplace(hashStack(s), pos);
    if (!inserted) {
        for (uint32_t i = first;; i = sameHash_[i]) {
            const Stack& p = stacks[i];
            if (p.kind == s.kind && p.frames == s.frames)
                return p.id;
            if (sameHash_[i] == kNoStack) {
                sameHash_[i] = pos;
                break;
            }
        }
    }
    sameHash_.push_back(kNoStack);
    Stack& p = stacks.emplace_back(std::forward<S>(s));
    p.id = id;
    return id;
}

// Ids a run's sites name without a stack are shifted by the run's offset.
uint32_t PoolBuilder::stackId(uint32_t runId) const
{
    return ids_.find(runId).value_or(runId + offset_);
}

void PoolBuilder::foldLock(const Lock& l)
{
    std::vector<Lock>& locks = pool_.capture.locks;
    const auto [it, inserted] = lockIndex_.try_emplace(l.key, locks.size());
    if (inserted) {
        locks.push_back(l);
        release(locks.back().sites);  // the pool keeps them as SiteShares
        pool_.sites.emplace_back();
    } else {
        mergeLock(locks[it->second], l);
    }
    std::vector<SiteShare>& sites = pool_.sites[it->second];
    for (const LockSite& s : l.sites) {
        SiteShare share = ownShare(s);
        share.site = nullptr;  // the run's site does not outlive the fold
        share.stack_id = stackId(s.stack_id);
        sites.push_back(share);
    }
}

void PoolBuilder::foldCpu(const CpuProfile& cpu)
{
    CpuProfile& pool = pool_.capture.cpu;
    pool.samples += cpu.samples;
    pool.lock_samples += cpu.lock_samples;
    pool.idle_samples += cpu.idle_samples;
    // One run that did not count them leaves the pool's count unknown: a sum of the others would read low.
    pool.bpf_samples = pool.bpf_samples && cpu.bpf_samples ? std::optional(*pool.bpf_samples + *cpu.bpf_samples)
                                                           : std::nullopt;
    for (const auto& l : cpu.top_leaves)
        leaves_[{l.function, l.module}] += l.samples;
    for (StackCount sc : cpu.stacks) {
        sc.stack_id = stackId(sc.stack_id);
        pool.stacks.push_back(sc);
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

PoolBuilder::Pool PoolBuilder::finish()
{
    std::vector<LeafShare>& top = pool_.capture.cpu.top_leaves;
    for (const auto& [fm, n] : leaves_)
        top.push_back(LeafShare{fm.first, fm.second, n});
    std::stable_sort(top.begin(), top.end(), [](const LeafShare& a, const LeafShare& b) { return a.samples > b.samples; });
    return std::move(pool_);
}

PoolBuilder::Pool poolRuns(const std::vector<const Capture*>& runs)
{
    if (runs.size() == 1)
        return PoolBuilder::Pool::ofOneRun(*runs.front());
    PoolBuilder b;
    for (const Capture* run : runs)
        b.add(*run);
    return b.finish();
}

PooledSide pooledSide(const PoolBuilder::Pool& pool, const std::vector<const Capture*>& runs)
{
    return PooledSide{runs.size() > 1 ? pool.capture : *runs.front(), pool.sites};
}

DataQuality dataQuality(const std::vector<const Capture*>& runs)
{
    DataQuality q;
    for (const Capture* run : runs) {
        q.events += run->stats.events;
        q.lost += run->stats.lost;
        q.stack_failures += run->stats.stack_failures;
        q.waits_untimed += run->stats.waits_untimed;
        for (const auto& l : run->locks) {
            q.waits += l.wait.count();
            q.lock_events += l.wait.count() + l.hold.count();
        }
    }
    return q;
}

} // namespace lockscope::reports::detail
