// SPDX-License-Identifier: GPL-2.0-or-later
#include <algorithm>
#include <map>

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
} // namespace

Capture poolRuns(const std::vector<const Capture*>& runs)
{
    Capture p;
    p.meta = runs.front()->meta;
    p.meta.duration_s = 0.0;
    p.probes = runs.front()->probes;
    p.workload = runs.front()->workload;
    p.cpu.frequency_hz = runs.front()->cpu.frequency_hz;
    std::map<std::string, size_t> lockIndex, syscallIndex, functionIndex;
    std::map<std::pair<std::string, std::string>, uint64_t> leaves;
    uint32_t offset = 0;
    for (const Capture* run : runs) {
        p.meta.duration_s += run->meta.duration_s;
        p.stats += run->stats;
        uint32_t next = offset;
        for (const auto& s : run->stacks) {
            Stack copy = s;
            copy.id += offset;
            next = std::max(next, copy.id + 1);
            p.stacks.push_back(std::move(copy));
        }
        for (const auto& l : run->locks) {
            const auto [it, inserted] = lockIndex.try_emplace(l.key, p.locks.size());
            if (inserted) {
                p.locks.push_back(l);
                p.locks.back().sites.clear();
            } else {
                Lock& m = p.locks[it->second];
                m.wait.merge(l.wait);
                m.wait_untimed += l.wait_untimed;
                m.hold.merge(l.hold);
                m.acquire.merge(l.acquire);
                m.aborted += l.aborted;
                m.instances = std::max(m.instances, l.instances);
            }
            Lock& m = p.locks[it->second];
            for (LockSite site : l.sites) {
                site.stack_id += offset;
                if (site.user_stack_id)
                    *site.user_stack_id += offset;
                for (auto& h : site.holders)
                    h.stack_id += offset;
                m.sites.push_back(std::move(site));
            }
        }
        addLatency(p.syscalls, syscallIndex, run->syscalls);
        addLatency(p.functions, functionIndex, run->functions);
        p.cpu.samples += run->cpu.samples;
        p.cpu.lock_samples += run->cpu.lock_samples;
        p.cpu.idle_samples += run->cpu.idle_samples;
        for (const auto& l : run->cpu.top_leaves)
            leaves[{l.function, l.module}] += l.samples;
        for (StackCount sc : run->cpu.stacks) {
            sc.stack_id += offset;
            p.cpu.stacks.push_back(sc);
        }
        offset = next;
    }
    for (const auto& [fm, n] : leaves)
        p.cpu.top_leaves.push_back(LeafShare{fm.first, fm.second, n});
    std::stable_sort(p.cpu.top_leaves.begin(), p.cpu.top_leaves.end(),
                     [](const LeafShare& a, const LeafShare& b) { return a.samples > b.samples; });
    return p;
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
