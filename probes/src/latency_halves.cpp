// SPDX-License-Identifier: GPL-2.0-or-later
#include "latency_halves.h"

#include <vector>

#include <bpf/bpf.h>

#include "bpf_util.h"

namespace lockscope::probes::detail {

std::optional<ls_lat_val> readLatencySlot(int fd, uint32_t slot, uint32_t half)
{
    const size_t ncpus = static_cast<size_t>(possibleCpus());
    std::vector<ls_lat_val> cpus(2 * ncpus);
    for (uint32_t h = 0; h < 2; ++h) {
        const uint32_t key = slot + h * half;
        if (bpf_map_lookup_elem(fd, &key, cpus.data() + h * ncpus) != 0)
            return std::nullopt;
    }
    return mergeCpus(cpus);
}

std::optional<ls_lat_val> takeLatencySlot(int fd, uint32_t slot, uint32_t half, uint32_t closed)
{
    const size_t ncpus = static_cast<size_t>(possibleCpus());
    std::vector<ls_lat_val> cpus(ncpus);
    const uint32_t key = slot + (closed & 1) * half;
    if (bpf_map_lookup_elem(fd, &key, cpus.data()) != 0)
        return std::nullopt;
    const ls_lat_val sum = mergeCpus(cpus);
    if (sum.hist.count || sum.calls || sum.errors) {
        const std::vector<ls_lat_val> zero(ncpus);
        bpf_map_update_elem(fd, &key, zero.data(), BPF_ANY);
    }
    return sum;
}

} // namespace lockscope::probes::detail
