// SPDX-License-Identifier: GPL-2.0-or-later
#include "lockscope/agent/lock_series.h"

#include <algorithm>

namespace lockscope::agent {

void LockFigures::add(const Lock& lock)
{
    contentions += lock.wait.count();
    wait_ns = saturatingAdd(wait_ns, lock.wait.total());
    holds += lock.hold.count();
    hold_ns = saturatingAdd(hold_ns, lock.hold.total());
    for (unsigned b = 0; b < Log2Hist::kBuckets; ++b) {
        wait_buckets[b] += lock.wait.bucket(b);
        hold_buckets[b] += lock.hold.bucket(b);
    }
}

LockSeries::LockSeries(size_t top, size_t keep) : top_(top), keep_(std::max(keep, top * 10 + 100)) {}

void LockSeries::add(const Capture& slice)
{
    for (const Lock& l : slice.locks) {
        LockSeriesEntry& e = entries_[l.key + '\n' + l.cgroup];
        if (e.key.empty()) {
            e.key = l.key;
            e.type = l.type;
            e.cgroup = l.cgroup;
        }
        if (e.name.empty())
            e.name = l.nameBesideKey();
        e.ranking_wait_ns = saturatingAdd(e.ranking_wait_ns, l.wait.total());
        (e.shown ? e.figures : other_).add(l);
    }
    rerank();
}

void LockSeries::rerank()
{
    std::vector<LockSeriesEntry*> order;
    order.reserve(entries_.size());
    for (auto& [id, e] : entries_)
        order.push_back(&e);
    // Ties keep the ones already shown, then the key order: no flapping.
    std::stable_sort(order.begin(), order.end(), [](const LockSeriesEntry* a, const LockSeriesEntry* b) {
        if (a->ranking_wait_ns != b->ranking_wait_ns)
            return a->ranking_wait_ns > b->ranking_wait_ns;
        return a->shown > b->shown;
    });
    for (size_t i = 0; i < order.size(); ++i)
        order[i]->shown = i < top_ && order[i]->ranking_wait_ns > 0;
    if (order.size() <= keep_)
        return;
    for (size_t i = keep_; i < order.size(); ++i) {
        entries_.erase(order[i]->key + '\n' + order[i]->cgroup);
        ++forgotten_;
    }
}

std::vector<const LockSeriesEntry*> LockSeries::shown() const
{
    std::vector<const LockSeriesEntry*> out;
    for (const auto& [id, e] : entries_)
        if (e.shown)
            out.push_back(&e);
    std::sort(out.begin(), out.end(), [](const LockSeriesEntry* a, const LockSeriesEntry* b) {
        return a->ranking_wait_ns > b->ranking_wait_ns;
    });
    return out;
}

} // namespace lockscope::agent
