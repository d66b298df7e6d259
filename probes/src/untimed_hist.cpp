// SPDX-License-Identifier: GPL-2.0-or-later
#include "untimed_hist.h"

#include <algorithm>
#include <array>
#include <numeric>
#include <vector>

namespace lockscope::probes::detail {

uint64_t timedCount(const ls_hist& h)
{
    return std::accumulate(std::begin(h.slots), std::end(h.slots), uint64_t { 0 });
}

void spreadUntimed(ls_hist& h, uint64_t untimed, const ls_hist& like)
{
    const uint64_t base = timedCount(like);
    const uint64_t own = timedCount(h);
    std::array<long double, LS_HIST_SLOTS> frac {};
    uint64_t given = 0;
    for (size_t b = 0; b < LS_HIST_SLOTS; ++b) {
        const long double share = static_cast<long double>(untimed) * like.slots[b] / base;
        const auto whole = static_cast<uint64_t>(share);
        h.slots[b] += whole;
        frac[b] = share - whole;
        given += whole;
    }
    std::array<size_t, LS_HIST_SLOTS> order {};
    std::iota(order.begin(), order.end(), size_t { 0 });
    std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return frac[a] > frac[b]; });
    for (size_t i = 0; given < untimed && i < order.size(); ++i, ++given)
        h.slots[order[i]] += 1;
    h.total += static_cast<uint64_t>(static_cast<long double>(untimed) * like.total / base);
    h.min = own == 0 ? like.min : std::min<uint64_t>(h.min, like.min);
    h.max = own == 0 ? like.max : std::max<uint64_t>(h.max, like.max);
}

void LastShapes::remember(const Key& key, const ls_hist& like)
{
    shapes_.insert_or_assign(key, Entry { like, window_ });
}

const ls_hist* LastShapes::find(const Key& key)
{
    const auto it = shapes_.find(key);
    if (it == shapes_.end())
        return nullptr;
    it->second.window = window_;
    return &it->second.like;
}

void LastShapes::endWindow()
{
    ++window_;
    if (shapes_.size() <= kMax)
        return;
    std::vector<uint64_t> windows;
    windows.reserve(shapes_.size());
    for (const auto& [key, e] : shapes_)
        windows.push_back(e.window);
    // The kMax-th most recent window: keys used before it go (ties may keep a few more).
    const auto cut = windows.end() - static_cast<std::ptrdiff_t>(kMax);
    std::nth_element(windows.begin(), cut, windows.end());
    std::erase_if(shapes_, [oldest = *cut](const auto& kv) { return kv.second.window < oldest; });
}

} // namespace lockscope::probes::detail
