// SPDX-License-Identifier: GPL-2.0-or-later
#include "paths.h"

#include <algorithm>
#include <cstdio>
#include <unordered_map>

#include "lockscope/capture/calltree.h"
#include "lockscope/capture/lock_frames.h"
#include "lockscope/reports/report.h"

namespace lockscope::reports {

std::vector<std::string> pathLabels(const Stack* stack)
{
    std::vector<std::string> out;
    if (!stack || stack->frames.empty()) {
        out.emplace_back("[no stack]");
        return out;
    }
    out.reserve(stack->frames.size());
    for (auto it = stack->frames.rbegin(); it != stack->frames.rend(); ++it)
        out.push_back(frameLabel(*it));
    return out;
}

std::string joinPath(const std::vector<std::string>& frames)
{
    std::string s;
    for (const auto& f : frames) {
        if (!s.empty())
            s += ';';
        s += f;
    }
    return s;
}

std::vector<FoldedPath> lockPaths(const Lock& lock, const StackIndex& index)
{
    return lockPaths(shareOutUnsampled(lock, index), index);
}

std::vector<FoldedPath> lockPaths(const LockShares& shares, const StackIndex& index)
{
    std::vector<FoldedPath> paths;
    std::unordered_map<std::string, size_t> byKey;
    for (const SiteShare& site : shares.sites) {
        auto labels = pathLabels(index.find(site.stack_id));
        auto [it, inserted] = byKey.try_emplace(joinPath(labels), paths.size());
        if (inserted) {
            paths.emplace_back();
            paths.back().frames = std::move(labels);
        }
        FoldedPath& p = paths[it->second];
        p.count += site.count();
        p.wait_ns = saturatingAdd(p.wait_ns, site.wait_ns);
        p.hold_ns = saturatingAdd(p.hold_ns, site.hold_ns);
    }
    std::stable_sort(paths.begin(), paths.end(), [](const FoldedPath& a, const FoldedPath& b) {
        if (a.wait_ns != b.wait_ns)
            return a.wait_ns > b.wait_ns;
        if (a.hold_ns != b.hold_ns)
            return a.hold_ns > b.hold_ns;
        return a.frames < b.frames;
    });
    return paths;
}

std::string callerOf(const Lock& lock, const StackIndex& index)
{
    return callerOf(shareOutUnsampled(lock, index), index);
}

std::string callerOf(const LockShares& shares, const StackIndex& index)
{
    // The hottest site with a call path: the waits not walked that no walked
    // site could take name no caller.
    const SiteShare* hottest = nullptr;
    for (const SiteShare& site : shares.sites) {
        if (isNotSampledStack(index.find(site.stack_id)))
            continue;
        if (!hottest || saturatingAdd(site.wait_ns, site.hold_ns) > saturatingAdd(hottest->wait_ns, hottest->hold_ns))
            hottest = &site;
    }
    if (!hottest)
        return "";
    const Stack* stack = index.find(hottest->stack_id);
    if (!stack)
        return "";
    for (const auto& f : stack->frames) {
        if (f.function.empty() || isLockInternalFrame(f.function))
            continue;
        char off[32];
        std::snprintf(off, sizeof off, "+0x%llx", static_cast<unsigned long long>(f.offset));
        return f.function.str() + off;
    }
    return "";
}

} // namespace lockscope::reports
