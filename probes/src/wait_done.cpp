// SPDX-License-Identifier: GPL-2.0-or-later
#include "wait_done.h"

#include <algorithm>

#include <bpf/bpf.h>

#include "bpf_util.h"

namespace lockscope::probes::detail {

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

uint64_t addUndrained(const std::vector<ls_wait_done>& done, std::vector<LockRecord>& waits, size_t first,
    std::vector<HolderRecord>& holders)
{
    for (const auto& d : done) {
        auto it = std::find_if(waits.begin() + static_cast<std::ptrdiff_t>(std::min(first, waits.size())),
            waits.end(), [&](const LockRecord& r) {
                return r.lock_addr == d.lock && r.kstack_id == d.kstack && r.ustack_id == d.ustack
                    && r.flags == d.flags && r.tgid == d.tgid;
            });
        if (it == waits.end()) {
            waits.push_back(waitRecordOf(d));
            it = waits.end() - 1;
        }
        it->hist.add(d.delta);
        if (d.holder_state != LS_HOLDER_FOUND)
            continue;
        auto h = std::find_if(holders.begin(), holders.end(), [&](const HolderRecord& x) {
            return x.lock_addr == d.lock && x.wait_kstack_id == d.kstack && x.holder_kstack_id == d.holder
                && x.tgid == d.tgid;
        });
        if (h == holders.end()) {
            holders.push_back(HolderRecord { d.lock, d.kstack, d.holder, d.tgid, 0, 0 });
            h = holders.end() - 1;
        }
        h->count += 1;
        h->wait_ns += d.delta;
    }
    return done.size();
}

} // namespace lockscope::probes::detail
