// SPDX-License-Identifier: GPL-2.0-or-later
#include "lockscope/record/record_filters.h"

#include <algorithm>
#include <cctype>
#include <optional>
#include <stdexcept>
#include <type_traits>

#include "lockscope/capture/tail_basis.h"
#include "lockscope/record/recorder.h"

namespace lockscope::record {
namespace {

template <class T> std::string joined(const std::vector<T>& values)
{
    std::string s;
    for (const auto& v : values) {
        if (!s.empty())
            s += ",";
        if constexpr (std::is_same_v<T, std::string>)
            s += v;
        else
            s += std::to_string(v);
    }
    return s;
}

std::optional<uint64_t> hexAddress(const std::string& l)
{
    if (l.rfind("0x", 0) != 0 && l.rfind("0X", 0) != 0)
        return std::nullopt;
    try {
        size_t used = 0;
        const uint64_t addr = std::stoull(l, &used, 16);
        if (used == l.size())
            return addr;
    } catch (const std::exception&) {
    }
    throw RecordError("'" + l + "' is not a hex address");
}

// A global lock's key, "symbol+0xOFFSET" (rename_lock+0x4), at its address.
// A bare symbol is not taken: "rename_lock" also names every lock inside it.
std::optional<uint64_t> globalKeyAddress(const std::string& key, const KernelSymbols& symbols)
{
    const size_t plus = key.rfind("+0x");
    if (plus == std::string::npos || plus == 0)
        return std::nullopt;
    const std::string hex = key.substr(plus + 3);
    auto isHex = [](unsigned char c) { return std::isxdigit(c) != 0; };
    if (hex.empty() || hex.size() > 16 || !std::all_of(hex.begin(), hex.end(), isHex))
        return std::nullopt;
    const uint64_t offset = std::stoull(hex, nullptr, 16);
    const auto base = symbols.dataAddressOf(std::string_view(key).substr(0, plus));
    return base ? std::optional<uint64_t>(*base + offset) : std::nullopt;
}

// What is sampled or budgeted, and how deep stacks go.
void addSampling(const probes::Options& p, std::map<std::string, std::string>& f)
{
    f["stack_depth"] = std::to_string(p.stack_depth);
    f["hold_sample"] = p.hold == probes::Backend::Off ? "off" : std::to_string(p.hold_sample);
    if (p.hold != probes::Backend::Off) // locks' "acquire" counts acquisitions from this long
        f["acquire_min_ns"] = std::to_string(p.acquire_min_ns);
    if (p.holder_stacks)
        f["holder_stacks"] = "true";
    if (p.lock_owner)
        f["lock_owner"] = "true";
    f["syscall_sample"] = p.syscalls ? std::to_string(p.syscall_sample) : "off";
    if (p.syscalls && p.syscall_sample == 1)
        f["syscall_budget"] = std::to_string(p.syscall_budget);
    if (p.stack_sample > 1)
        f["stack_sample"] = std::to_string(p.stack_sample);
    else if (p.stack_depth > 0)
        f["stack_budget"] = std::to_string(p.stack_budget);
    if (!p.holder_stacks)
        f["timing_budget"] = std::to_string(p.timing_budget);
    if (!p.holder_stacks && p.timing_budget > 0 && p.exact_tail) // wait.bpf.c times every wait this long all the same
        f[kExactWaitNsFilter] = std::to_string(probes::exactWaitNs());
    f["cpu_frequency_hz"] = std::to_string(p.cpu_frequency_hz);
}

} // namespace

void selectLocks(const LockSelection& selection, AssembleOptions& assemble)
{
    assemble.lock_types.insert(selection.types.begin(), selection.types.end());
    for (const auto& l : selection.locks) {
        if (auto addr = hexAddress(l))
            assemble.lock_addrs.insert(*addr);
        else
            assemble.lock_keys.insert(l);
    }
}

std::vector<uint64_t> kernelLockFilter(const LockSelection& selection, const KernelSymbols& symbols)
{
    std::vector<uint64_t> addrs;
    for (const auto& l : selection.locks) {
        auto addr = hexAddress(l);
        if (!addr)
            addr = globalKeyAddress(l, symbols);
        if (!addr)
            return {};
        addrs.push_back(*addr);
    }
    return addrs;
}

std::map<std::string, std::string> recordFilters(const RecordOptions& o)
{
    std::map<std::string, std::string> f;
    const probes::Options& p = o.probe;
    if (!o.pids.empty())
        f["pid"] = joined(o.pids);
    if (o.all)
        f["all"] = "true";
    if (!p.comm.empty())
        f["comm"] = p.comm;
    if (!o.locks.types.empty())
        f["lock_type"] = joined(o.locks.types);
    if (!o.locks.locks.empty())
        f["lock"] = joined(o.locks.locks);
    if (!o.assemble.stack_contains.empty())
        f["stack_contains"] = joined(o.assemble.stack_contains);
    if (p.per_tgid)
        f["per_tgid"] = "true";
    if (p.per_cgroup)
        f["per_cgroup"] = "true";
    if (!o.cgroup.empty())
        f["cgroup"] = o.cgroup;
    if (p.lock_names)
        f["lock_names"] = "true";
    addSampling(p, f);
    if (o.duration_s > 0)
        f["duration_s"] = std::to_string(o.duration_s);
    return f;
}

} // namespace lockscope::record
