// SPDX-License-Identifier: GPL-2.0-or-later
#include "lockscope/capture/site_shares.h"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace lockscope {
namespace {

// count x weight overflows 64 bits for nanosecond totals.
__extension__ typedef unsigned __int128 Wide;

bool isPseudoStack(const Stack* stack, const char* frame) noexcept
{
    return stack && stack->frames.size() == 1 && stack->frames[0].function == frame && stack->frames[0].module.empty();
}

// Splits `amount` over `weights` in proportion, exactly (largest remainder,
// ties to the first): the parts always sum to `amount`. All zero when the
// weights are.
std::vector<uint64_t> apportion(uint64_t amount, const std::vector<uint64_t>& weights)
{
    std::vector<uint64_t> parts(weights.size(), 0);
    Wide sum = 0;
    for (uint64_t w : weights)
        sum += w;
    if (!amount || sum == 0)
        return parts;
    std::vector<Wide> rem(weights.size(), 0);
    uint64_t given = 0;
    for (size_t i = 0; i < weights.size(); ++i) {
        const Wide scaled = static_cast<Wide>(amount) * weights[i];
        parts[i] = static_cast<uint64_t>(scaled / sum);
        rem[i] = scaled % sum;
        given += parts[i];
    }
    std::vector<size_t> order(weights.size());
    std::iota(order.begin(), order.end(), size_t{0});
    std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return rem[a] > rem[b]; });
    for (size_t k = 0; given < amount; ++k, ++given)
        ++parts[order[k % order.size()]];
    return parts;
}

// Shares one kind's unwalked count and time over the receivers; returns
// whether any receiver walked that kind (else the not-sampled site keeps it).
bool shareKind(uint64_t count, uint64_t ns, const std::vector<size_t>& receivers, std::vector<SiteShare>& sites,
               uint64_t SiteShare::*countOf, uint64_t SiteShare::*nsOf)
{
    std::vector<uint64_t> counts, times;
    for (size_t i : receivers) {
        counts.push_back(sites[i].*countOf);
        times.push_back(sites[i].*nsOf);
    }
    if (std::all_of(counts.begin(), counts.end(), [](uint64_t c) { return c == 0; }))
        return false;
    // Time follows the walked time; walked events that all took 0 ns share it by count.
    const bool timed = std::any_of(times.begin(), times.end(), [](uint64_t t) { return t != 0; });
    const auto countParts = apportion(count, counts);
    const auto timeParts = apportion(ns, timed ? times : counts);
    for (size_t k = 0; k < receivers.size(); ++k) {
        SiteShare& s = sites[receivers[k]];
        s.*countOf += countParts[k];
        s.*nsOf = saturatingAdd(s.*nsOf, timeParts[k]);
    }
    return true;
}

} // namespace

bool isNotSampledStack(const Stack* stack) noexcept
{
    return isPseudoStack(stack, kNotSampledFrame);
}

double WalkedShare::shareUncertainty() const noexcept
{
    if (!walked || walked >= all)
        return 0.0;
    const double n = double(walked), N = double(all);
    const double fpc = N > 1 ? (N - n) / (N - 1) : 0.0;
    return 1.96 * std::sqrt(0.25 / n * fpc);
}

SiteShare ownShare(const LockSite& site)
{
    return SiteShare{&site,           site.stack_id,          site.wait.count(),     site.wait.total(),
                     site.hold.count(), site.hold.total(), site.acquire.count(), site.acquire.total()};
}

LockShares shareOutUnsampled(const Lock& lock, const StackIndex& index)
{
    std::vector<SiteShare> sites;
    sites.reserve(lock.sites.size());
    for (const auto& site : lock.sites)
        sites.push_back(ownShare(site));
    return shareOutUnsampled(std::move(sites), index);
}

LockShares shareOutUnsampled(std::vector<SiteShare> sites, const StackIndex& index)
{
    LockShares out;
    out.sites = std::move(sites);
    std::vector<size_t> receivers;
    std::vector<size_t> unsampled;
    for (size_t i = 0; i < out.sites.size(); ++i) {
        const Stack* stack = index.find(out.sites[i].stack_id);
        if (isNotSampledStack(stack))
            unsampled.push_back(i);
        else if (stack && !stack->frames.empty() && !isPseudoStack(stack, kNoStackFrame))
            receivers.push_back(i);
    }
    for (size_t i : receivers) {
        out.waits.walked += out.sites[i].waits;
        out.holds.walked += out.sites[i].holds;
    }
    out.waits.all = out.waits.walked;
    out.holds.all = out.holds.walked;
    std::vector<bool> drop(out.sites.size(), false);
    for (size_t u : unsampled) {
        SiteShare& s = out.sites[u];
        if (shareKind(s.waits, s.wait_ns, receivers, out.sites, &SiteShare::waits, &SiteShare::wait_ns)) {
            out.waits.all += s.waits;
            s.waits = s.wait_ns = 0;
        }
        if (shareKind(s.holds, s.hold_ns, receivers, out.sites, &SiteShare::holds, &SiteShare::hold_ns)) {
            out.holds.all += s.holds;
            s.holds = s.hold_ns = 0;
        }
        if (shareKind(s.acquires, s.acquire_ns, receivers, out.sites, &SiteShare::acquires, &SiteShare::acquire_ns))
            s.acquires = s.acquire_ns = 0;
        drop[u] = !s.waits && !s.wait_ns && !s.holds && !s.hold_ns && !s.acquires && !s.acquire_ns;
    }
    size_t kept = 0;
    for (size_t i = 0; i < out.sites.size(); ++i)
        if (!drop[i])
            out.sites[kept++] = out.sites[i];
    out.sites.resize(kept);
    return out;
}

HolderShares shareOutHolders(const Lock& lock, const StackIndex& index)
{
    HolderShares out;
    std::vector<Holder> donors;
    for (const auto& site : lock.sites) {
        const bool unwalkedWait = isNotSampledStack(index.find(site.stack_id));
        for (const auto& h : site.holders) {
            const Stack* s = index.find(h.stack_id);
            const bool stackless = !s || s->frames.empty() || isPseudoStack(s, kNoStackFrame);
            (unwalkedWait && stackless ? donors : out.holders).push_back(h);
        }
    }
    std::vector<size_t> receivers;
    std::vector<uint64_t> counts, times;
    for (size_t i = 0; i < out.holders.size(); ++i) {
        const Stack* s = index.find(out.holders[i].stack_id);
        if (s && !s->frames.empty() && !isPseudoStack(s, kNoStackFrame)) {
            receivers.push_back(i);
            counts.push_back(out.holders[i].count);
            times.push_back(out.holders[i].wait_ns);
            out.owners.walked += out.holders[i].count;
        }
    }
    out.owners.all = out.owners.walked;
    uint64_t count = 0, ns = 0;
    for (const Holder& d : donors) {
        count += d.count;
        ns = saturatingAdd(ns, d.wait_ns);
    }
    const bool anyCount = std::any_of(counts.begin(), counts.end(), [](uint64_t c) { return c != 0; });
    if (!anyCount) {
        out.holders.insert(out.holders.end(), donors.begin(), donors.end());
        return out;
    }
    const bool timed = std::any_of(times.begin(), times.end(), [](uint64_t t) { return t != 0; });
    const auto countParts = apportion(count, counts);
    const auto timeParts = apportion(ns, timed ? times : counts);
    for (size_t k = 0; k < receivers.size(); ++k) {
        Holder& h = out.holders[receivers[k]];
        h.count += countParts[k];
        h.wait_ns = saturatingAdd(h.wait_ns, timeParts[k]);
    }
    out.owners.all += count;
    return out;
}

} // namespace lockscope
