// SPDX-License-Identifier: GPL-2.0-or-later
#include "wait_hist.h"

#include <algorithm>
#include <map>
#include <tuple>

#include <bpf/bpf.h>

#include "bpf_util.h"

namespace lockscope::probes::detail {

namespace {

void addTimed(ls_hist& h, uint64_t delta)
{
    const uint64_t timed = timedCount(h);
    h.slots[Log2Hist::bucketOf(delta)] += 1;
    h.total += delta;
    h.min = timed == 0 ? delta : std::min<uint64_t>(h.min, delta);
    h.max = timed == 0 ? delta : std::max<uint64_t>(h.max, delta);
}

// The entry of waits with the key of k (an ls_wait_key or an ls_wait_done),
// started empty if there is none.
template <class Key> RawWait& entryOf(std::vector<RawWait>& waits, const Key& k)
{
    auto it = std::find_if(waits.begin(), waits.end(), [&](const RawWait& w) {
        const LockRecord& r = w.record;
        return r.lock_addr == k.lock && r.kstack_id == k.kstack && r.ustack_id == k.ustack && r.flags == k.flags
            && r.tgid == k.tgid && r.cgroup == k.cgroup;
    });
    if (it != waits.end())
        return *it;
    return waits.emplace_back(RawWait { waitRecordOf(k), {} });
}

// As wait.bpf.c's weighted_add.
void addWeighted(ls_hist& h, uint64_t delta, uint32_t weight)
{
    h.slots[Log2Hist::bucketOf(delta)] += weight;
    h.total += delta * weight;
    h.count += weight;
    h.min = h.max == 0 ? delta : std::min<uint64_t>(h.min, delta);
    h.max = std::max<uint64_t>(h.max, delta);
}

// The weighted entry (LS_WAIT_F_WEIGHTED) a timed wait d still in a ring
// would have gone to; finishWaits matches them by lock, flags, tgid and cgroup.
RawWait& weightedEntryOf(std::vector<RawWait>& waits, const ls_wait_done& d)
{
    ls_wait_key k {};
    k.lock = d.lock;
    k.kstack = LS_STACK_UNSAMPLED;
    k.flags = d.flags | LS_WAIT_F_WEIGHTED;
    k.tgid = d.tgid;
    k.ustack = -1;
    k.cgroup = d.cgroup;
    return entryOf(waits, k);
}

// Adds h's timed part (slots, total, min, max) to into, which starts all zero.
void addTimedPart(ls_hist& into, const ls_hist& h)
{
    const bool first = timedCount(into) == 0;
    for (size_t b = 0; b < LS_HIST_SLOTS; ++b)
        into.slots[b] += h.slots[b];
    into.total += h.total;
    into.min = first ? h.min : std::min<uint64_t>(into.min, h.min);
    into.max = first ? h.max : std::max<uint64_t>(into.max, h.max);
}

// Entries keyed by their record: a key filed in both generations is one.
class WaitEntries {
public:
    void add(const ls_wait_key& key, const ls_hist& hist)
    {
        ls_wait_key k = key;
        k.flags &= ~LS_WAIT_F_GEN;
        const auto [it, added] = index_.try_emplace(
            std::make_tuple(k.lock, k.kstack, k.flags, k.tgid, k.ustack, k.cgroup), raw_.size());
        if (added)
            raw_.push_back(RawWait { waitRecordOf(k), hist });
        else
            raw_[it->second].hist = sumCpuHists({ raw_[it->second].hist, hist });
    }
    std::vector<RawWait> take() { return std::move(raw_); }

private:
    std::map<std::tuple<uint64_t, int32_t, uint32_t, uint32_t, int32_t, uint64_t>, size_t> index_;
    std::vector<RawWait> raw_;
};

} // namespace

std::vector<RawWait> readWaits(int waits_map_fd)
{
    std::vector<ls_hist> cpus(static_cast<size_t>(possibleCpus()));
    WaitEntries entries;
    for (const ls_wait_key& key : keysOf<ls_wait_key>(waits_map_fd))
        if (bpf_map_lookup_elem(waits_map_fd, &key, cpus.data()) == 0) // else deleted meanwhile
            entries.add(key, sumCpuHists(cpus));
    return entries.take();
}

ClosedGeneration closeWaitGeneration(volatile uint32_t* gen)
{
    const uint32_t closed = closeGeneration(gen);
    return { closed, waitForRunningPrograms() };
}

std::vector<RawWait> drainWaits(int waits_map_fd, ClosedGeneration g)
{
    std::vector<ls_hist> cpus(static_cast<size_t>(possibleCpus()));
    const std::vector<ls_hist> empty(cpus.size(), emptyHist());
    WaitEntries entries;
    drainGeneration<ls_wait_key>(
        waits_map_fd, g.settled,
        [&](const ls_wait_key& k) { return ((k.flags & LS_WAIT_F_GEN) != 0) == (g.bit != 0); }, cpus, empty,
        [&](const ls_wait_key& k, const std::vector<ls_hist>& v) {
            const ls_hist sum = sumCpuHists(v);
            if (sum.count == 0 && sum.max == 0)
                return false;
            entries.add(k, sum);
            return true;
        });
    return entries.take();
}

std::vector<ls_wait_done> undrainedWaits(int ring_map_fd)
{
    std::vector<ls_wait_done_ring> rings(static_cast<size_t>(possibleCpus()));
    const uint32_t zero = 0;
    std::vector<ls_wait_done> out;
    if (bpf_map_lookup_elem(ring_map_fd, &zero, rings.data()) != 0)
        return out;
    for (const auto& r : rings) {
        const uint32_t pending = r.head - r.tail;
        if (pending > LS_WAIT_DONE)
            continue;
        for (uint32_t t = r.tail; t != r.head; ++t)
            if (r.e[t & (LS_WAIT_DONE - 1)].ready) // filled (after detach: every reserved slot)
                out.push_back(r.e[t & (LS_WAIT_DONE - 1)]);
    }
    return out;
}

uint64_t addUndrained(const std::vector<ls_wait_done>& done, std::vector<RawWait>& waits,
    std::vector<HolderRecord>& holders)
{
    for (const auto& d : done) {
        RawWait& w = entryOf(waits, d);
        w.hist.count += d.counted ? 0 : 1; // else counted at its begin
        addTimed(w.hist, d.delta);
        if (d.weight && !(d.flags & LS_WAIT_F_TICKED))
            addWeighted(weightedEntryOf(waits, d).hist, d.delta, d.weight);
        if (d.holder_state != LS_HOLDER_FOUND)
            continue;
        auto h = std::find_if(holders.begin(), holders.end(), [&](const HolderRecord& x) {
            return x.lock_addr == d.lock && x.wait_kstack_id == d.kstack && x.holder_kstack_id == d.holder
                && x.tgid == d.tgid && x.cgroup == d.cgroup;
        });
        if (h == holders.end()) {
            holders.push_back(HolderRecord { d.lock, d.kstack, d.holder, d.tgid, 0, 0, d.cgroup });
            h = holders.end() - 1;
        }
        h->count += 1;
        h->wait_ns += d.delta;
    }
    return done.size();
}

std::vector<ls_wait_count> pendingCounts(int counts_map_fd)
{
    std::vector<ls_wait_counts> cpus(static_cast<size_t>(possibleCpus()));
    std::vector<ls_wait_count> out;
    for (uint32_t cache = 0; cache < LS_WAIT_COUNT_CACHES; ++cache) {
        if (bpf_map_lookup_elem(counts_map_fd, &cache, cpus.data()) != 0)
            continue;
        for (const auto& c : cpus)
            for (const auto& e : c.e)
                if (e.count)
                    out.push_back(e);
    }
    return out;
}

PendingCounts addPendingCounts(const std::vector<ls_wait_count>& counts, std::vector<RawWait>& waits)
{
    PendingCounts n;
    for (const auto& c : counts) {
        entryOf(waits, c.key).hist.count += c.count;
        n.waits += c.count;
        if (c.key.kstack == LS_STACK_UNSAMPLED)
            n.unsampled += c.count;
    }
    return n;
}

namespace {

// A wait histogram's key fields, for looking records up by them.
using WaitKey = std::tuple<uint64_t, int64_t, int64_t, uint32_t, uint32_t, uint64_t>;

WaitKey keyOf(const LockRecord& r)
{
    return { r.lock_addr, r.kstack_id, r.ustack_id, r.flags, r.tgid, r.cgroup };
}

// Takes the waits a tick went by in out of raw, keyed as the waits they
// belong with. One whose begin counted it (untimed and spinning) is in its
// histogram's slots only: its count is taken back from its own key's.
std::vector<RawWait> takeTickedWaits(std::vector<RawWait>& raw)
{
    const auto firstTicked = std::stable_partition(
        raw.begin(), raw.end(), [](const RawWait& w) { return !(w.record.flags & LS_WAIT_F_TICKED); });
    std::vector<RawWait> ticked(std::make_move_iterator(firstTicked), std::make_move_iterator(raw.end()));
    raw.erase(firstTicked, raw.end());
    std::map<WaitKey, RawWait*> byKey;
    for (auto& w : raw)
        byKey.emplace(keyOf(w.record), &w);
    for (auto& t : ticked) {
        t.record.flags &= ~LS_WAIT_F_TICKED;
        t.record.type = lockTypeName(t.record.flags);
        const uint64_t timed = timedCount(t.hist);
        const uint64_t lent = timed > t.hist.count ? timed - t.hist.count : 0;
        t.hist.count = timed;
        const auto own = byKey.find(keyOf(t.record));
        if (own != byKey.end())
            own->second->hist.count -= std::min<uint64_t>(lent, own->second->hist.count);
    }
    return ticked;
}

// The weighted samples (LS_WAIT_F_WEIGHTED) by the key of the untimed waits
// they stand for, and by lock and flags (for untimed waits whose own key has
// none: another tgid or cgroup of the lock was timed).
struct Weighted {
    std::map<std::tuple<uint64_t, uint32_t, uint32_t, uint64_t>, ls_hist> byKey;
    std::map<std::pair<uint64_t, uint32_t>, ls_hist> byFlags;
};

// A weighted histogram's count is the sum of its slots: its timed part and that count.
void addWeightedPart(ls_hist& into, const ls_hist& h)
{
    addTimedPart(into, h);
    into.count += h.count;
}

Weighted takeWeighted(std::vector<RawWait>& raw)
{
    Weighted out;
    const auto weighted = std::stable_partition(
        raw.begin(), raw.end(), [](const RawWait& w) { return !(w.record.flags & LS_WAIT_F_WEIGHTED); });
    for (auto it = weighted; it != raw.end(); ++it) {
        const LockRecord& r = it->record;
        const uint32_t flags = r.flags & ~LS_WAIT_F_WEIGHTED;
        if (timedCount(it->hist) == 0)
            continue;
        addWeightedPart(out.byKey[{ r.lock_addr, flags, r.tgid, r.cgroup }], it->hist);
        addWeightedPart(out.byFlags[{ r.lock_addr, flags }], it->hist);
    }
    raw.erase(weighted, raw.end());
    return out;
}

// Adds the waits a tick went by in to the records of their keys, or as
// records of their own.
void addTickedWaits(const std::vector<RawWait>& ticked, std::vector<LockRecord>& out)
{
    std::map<WaitKey, size_t> byKey;
    for (size_t i = 0; i < out.size(); ++i)
        byKey.emplace(keyOf(out[i]), i);
    for (const auto& t : ticked) {
        const Log2Hist h = histFromKernel(t.hist);
        if (h.empty())
            continue;
        const auto [at, added] = byKey.emplace(keyOf(t.record), out.size());
        if (!added) {
            out[at->second].hist.merge(h);
            continue;
        }
        LockRecord rec = t.record;
        rec.hist = h;
        out.push_back(std::move(rec));
    }
}

// Timed waits only: by lock and flags, and by lock.
struct TimedShapes {
    std::map<std::pair<uint64_t, uint32_t>, ls_hist> byFlags;
    std::map<uint64_t, ls_hist> byLock;
};

TimedShapes timedShapes(const std::vector<RawWait>& raw)
{
    TimedShapes t;
    for (const auto& w : raw) {
        if (timedCount(w.hist) == 0)
            continue;
        addTimedPart(t.byFlags.try_emplace({ w.record.lock_addr, w.record.flags }).first->second, w.hist);
        addTimedPart(t.byLock.try_emplace(w.record.lock_addr).first->second, w.hist);
    }
    return t;
}

// What w's untimed waits take their times from, best first: the weighted
// samples of its own key, then of its lock and flags; its own timed waits;
// the timed waits of its lock and flags, then of its lock (a sleep and a
// spin of one mutex differ by orders of magnitude); in a drain, the shape its
// lock and flags had in the last window that timed some. Null: none.
const ls_hist* shapeFor(const RawWait& w, const Weighted& weighted, const TimedShapes& timed, LastShapes* last)
{
    const LockRecord& r = w.record;
    const std::pair<uint64_t, uint32_t> lockFlags { r.lock_addr, r.flags };
    if (const auto it = weighted.byKey.find({ r.lock_addr, r.flags, r.tgid, r.cgroup }); it != weighted.byKey.end())
        return &it->second;
    if (const auto it = weighted.byFlags.find(lockFlags); it != weighted.byFlags.end())
        return &it->second;
    if (timedCount(w.hist))
        return &w.hist;
    if (const auto it = timed.byFlags.find(lockFlags); it != timed.byFlags.end())
        return &it->second;
    if (const auto it = timed.byLock.find(r.lock_addr); it != timed.byLock.end())
        return &it->second;
    return last ? last->find(lockFlags) : nullptr;
}

// This window's shapes by lock and flags, for the windows after it: the
// weighted samples where there are some, else the timed waits.
void rememberShapes(const Weighted& weighted, const TimedShapes& timed, LastShapes& last)
{
    for (const auto& [key, like] : timed.byFlags)
        if (!weighted.byFlags.count(key))
            last.remember(key, like);
    for (const auto& [key, like] : weighted.byFlags)
        last.remember(key, like);
    last.endWindow();
}

} // namespace

UntimedWaits finishWaits(std::vector<RawWait>& raw, std::vector<LockRecord>& out, LastShapes* last)
{
    const std::vector<RawWait> ticked = takeTickedWaits(raw);
    const Weighted weighted = takeWeighted(raw);
    const TimedShapes timed = timedShapes(raw);
    UntimedWaits u;
    for (auto& w : raw) {
        const uint64_t own = timedCount(w.hist);
        const uint64_t untimed = w.hist.count > own ? w.hist.count - own : 0;
        if (untimed) {
            const ls_hist* like = shapeFor(w, weighted, timed, last);
            if (like)
                spreadUntimed(w.hist, untimed, ls_hist(*like)); // like may be w.hist itself
            (like ? u.spread : u.unplaced) += untimed;
            w.record.untimed = like ? untimed : 0;
        }
        w.record.hist = histFromKernel(w.hist);
        if (!w.record.hist.empty())
            out.push_back(std::move(w.record));
    }
    addTickedWaits(ticked, out);
    if (last)
        rememberShapes(weighted, timed, *last);
    return u;
}

} // namespace lockscope::probes::detail
