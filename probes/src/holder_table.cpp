// SPDX-License-Identifier: GPL-2.0-or-later
#include "holder_table.h"

#include <map>
#include <tuple>

#include <bpf/bpf.h>

#include "bpf_util.h"

namespace lockscope::probes::detail {

namespace {

// lock, wait stack, holder stack, tgid, cgroup: the key without its generation.
using HolderKey = std::tuple<uint64_t, int32_t, int32_t, uint32_t, uint64_t>;

class HolderSums {
public:
    void add(const ls_holder_key& k, const ls_holder_val& v)
    {
        if (v.count == 0)
            return;
        ls_holder_val& s = sums_[{ k.lock, k.wait_kstack, k.holder_kstack, k.tgid, k.cgroup }];
        s.count += v.count;
        s.wait_ns += v.wait_ns;
    }

    std::vector<HolderRecord> take() const
    {
        std::vector<HolderRecord> out;
        out.reserve(sums_.size());
        for (const auto& [k, v] : sums_) {
            const auto& [lock, waitStack, holderStack, tgid, cgroup] = k;
            out.push_back(HolderRecord { lock, waitStack, holderStack, tgid, v.count, v.wait_ns, cgroup });
        }
        return out;
    }

private:
    std::map<HolderKey, ls_holder_val> sums_;
};

} // namespace

std::vector<HolderRecord> readHolders(int holders_map_fd)
{
    HolderSums sums;
    ls_holder_val value {};
    for (const ls_holder_key& key : keysOf<ls_holder_key>(holders_map_fd))
        if (bpf_map_lookup_elem(holders_map_fd, &key, &value) == 0) // else deleted meanwhile
            sums.add(key, value);
    return sums.take();
}

std::vector<HolderRecord> drainHolders(int holders_map_fd, ClosedGeneration closed)
{
    HolderSums sums;
    std::vector<ls_holder_val> value(1);
    const std::vector<ls_holder_val> empty(1);
    drainGeneration<ls_holder_key>(
        holders_map_fd, closed.settled, [&](const ls_holder_key& k) { return k.gen == closed.bit; }, value, empty,
        [&](const ls_holder_key& k, const std::vector<ls_holder_val>& v) {
            sums.add(k, v[0]);
            return v[0].count != 0;
        });
    return sums.take();
}

} // namespace lockscope::probes::detail
