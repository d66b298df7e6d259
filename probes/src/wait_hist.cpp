// SPDX-License-Identifier: GPL-2.0-or-later
#include "wait_hist.h"

#include <algorithm>
#include <map>

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

} // namespace

std::vector<RawWait> readWaits(int waits_map_fd)
{
    ls_wait_key key {}, next {};
    std::vector<ls_hist> cpus(static_cast<size_t>(possibleCpus()));
    std::vector<RawWait> raw;
    const void* prev = nullptr;
    while (bpf_map_get_next_key(waits_map_fd, prev, &next) == 0) {
        key = next;
        prev = &key;
        if (bpf_map_lookup_elem(waits_map_fd, &key, cpus.data()) != 0)
            continue; // deleted meanwhile
        raw.push_back(RawWait { waitRecordOf(key), sumCpuHists(cpus) });
    }
    return raw;
}

std::vector<RawWait> drainWaits(int waits_map_fd)
{
    // Keys first: deleting while walking with get_next_key restarts the walk.
    std::vector<ls_wait_key> keys;
    ls_wait_key key {}, next {};
    const void* prev = nullptr;
    while (bpf_map_get_next_key(waits_map_fd, prev, &next) == 0) {
        key = next;
        prev = &key;
        keys.push_back(key);
    }
    std::vector<ls_hist> cpus(static_cast<size_t>(possibleCpus()));
    std::vector<RawWait> raw;
    raw.reserve(keys.size());
    for (const ls_wait_key& k : keys)
        if (bpf_map_lookup_and_delete_elem(waits_map_fd, &k, cpus.data()) == 0)
            raw.push_back(RawWait { waitRecordOf(k), sumCpuHists(cpus) });
    return raw;
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

bool sameKey(const LockRecord& a, const LockRecord& b)
{
    return a.lock_addr == b.lock_addr && a.kstack_id == b.kstack_id && a.ustack_id == b.ustack_id
        && a.flags == b.flags && a.tgid == b.tgid && a.cgroup == b.cgroup;
}

// Takes the long waits out of raw, keyed as the waits they belong with. A
// long wait whose begin counted it (untimed and spinning) is in its
// histogram's slots only: its count is taken back from its short key.
std::vector<RawWait> takeLongWaits(std::vector<RawWait>& raw)
{
    std::vector<RawWait> longs;
    for (auto it = raw.begin(); it != raw.end();) {
        if (!(it->record.flags & LS_WAIT_F_LONG)) {
            ++it;
            continue;
        }
        RawWait l = std::move(*it);
        it = raw.erase(it);
        l.record.flags &= ~LS_WAIT_F_LONG;
        l.record.type = lockTypeName(l.record.flags);
        const uint64_t timed = timedCount(l.hist);
        const uint64_t lent = timed > l.hist.count ? timed - l.hist.count : 0;
        l.hist.count = timed;
        auto shortKey = std::find_if(raw.begin(), raw.end(), [&](const RawWait& w) { return sameKey(w.record, l.record); });
        if (shortKey != raw.end())
            shortKey->hist.count -= std::min<uint64_t>(lent, shortKey->hist.count);
        longs.push_back(std::move(l));
    }
    return longs;
}

// Adds the long waits to the records of their keys, or as records of their own.
void addLongWaits(const std::vector<RawWait>& longs, std::vector<LockRecord>& out)
{
    for (const auto& l : longs) {
        const Log2Hist h = histFromKernel(l.hist);
        if (h.empty())
            continue;
        auto r = std::find_if(out.begin(), out.end(), [&](const LockRecord& x) { return sameKey(x, l.record); });
        if (r != out.end()) {
            r->hist.merge(h);
            continue;
        }
        LockRecord rec = l.record;
        rec.hist = h;
        out.push_back(std::move(rec));
    }
}

} // namespace

UntimedWaits finishWaits(std::vector<RawWait>& raw, std::vector<LockRecord>& out)
{
    const std::vector<RawWait> longs = takeLongWaits(raw);
    // Timed waits only: by lock and flags, and by lock.
    std::map<std::pair<uint64_t, uint32_t>, ls_hist> byFlags;
    std::map<uint64_t, ls_hist> byLock;
    for (const auto& w : raw) {
        if (timedCount(w.hist) == 0)
            continue;
        addTimedPart(byFlags.try_emplace({ w.record.lock_addr, w.record.flags }).first->second, w.hist);
        addTimedPart(byLock.try_emplace(w.record.lock_addr).first->second, w.hist);
    }
    UntimedWaits u;
    for (auto& w : raw) {
        const uint64_t timed = timedCount(w.hist);
        const uint64_t untimed = w.hist.count > timed ? w.hist.count - timed : 0;
        if (untimed) {
            const auto flags = byFlags.find({ w.record.lock_addr, w.record.flags });
            const auto lock = byLock.find(w.record.lock_addr);
            if (timed)
                spreadUntimed(w.hist, untimed, ls_hist(w.hist));
            else if (flags != byFlags.end())
                spreadUntimed(w.hist, untimed, flags->second);
            else if (lock != byLock.end())
                spreadUntimed(w.hist, untimed, lock->second);
            const bool placed = timed || lock != byLock.end();
            (placed ? u.spread : u.unplaced) += untimed;
            w.record.untimed = placed ? untimed : 0;
        }
        w.record.hist = histFromKernel(w.hist);
        if (!w.record.hist.empty())
            out.push_back(std::move(w.record));
    }
    addLongWaits(longs, out);
    return u;
}

} // namespace lockscope::probes::detail
