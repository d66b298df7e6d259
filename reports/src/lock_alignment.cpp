// SPDX-License-Identifier: GPL-2.0-or-later
#include "lock_alignment.h"

#include <algorithm>
#include <array>
#include <functional>
#include <iterator>
#include <optional>
#include <set>
#include <string_view>
#include <unordered_set>

#include "lockscope/capture/lock_frames.h"

namespace lockscope::reports::detail {
namespace {

// "<type>@<caller><partition>" as the recorder and the importers write it
// (partition: "#<tgid>", "#<cgroup>", or none); nullopt for a symbol's key
// and for "<type>@unknown" (no walked stack, nothing to match by).
struct CallerKey {
    std::string_view type, caller, partition;
};

std::optional<CallerKey> callerKey(std::string_view key)
{
    const size_t at = key.find('@');
    if (at == std::string_view::npos || at == 0)
        return std::nullopt;
    const std::string_view rest = key.substr(at + 1);
    const size_t hash = rest.find('#');
    const CallerKey k { key.substr(0, at), rest.substr(0, hash),
        hash == std::string_view::npos ? std::string_view() : rest.substr(hash) };
    if (k.caller.empty() || k.caller == "unknown")
        return std::nullopt;
    return k;
}

std::string keyFor(const CallerKey& k, std::string_view caller)
{
    std::string s(k.type);
    s += '@';
    s += caller;
    s += k.partition;
    return s;
}

// A site's caller as the key names it (keyCallerName); "" for pseudo stacks
// ("[no stack]").
std::string_view siteCaller(const StackIndex& stacks, const LockSite& site, std::array<char, 24>& hex)
{
    const Stack* s = stacks.find(site.stack_id);
    if (!s || s->frames.empty())
        return {};
    const Frame& f = s->frames.front();
    if (!f.function.empty() && f.function.str().front() == '[')
        return {};
    return keyCallerName(f, hex);
}

uint64_t callerHash(std::string_view caller) { return std::hash<std::string_view>{}(caller); }

// Calls f(caller) for each of the lock's walked sites.
template <class F>
void eachWalkedCaller(const StackIndex& stacks, const Lock& l, F&& f)
{
    std::array<char, 24> hex{};
    for (const auto& site : l.sites)
        if (const std::string_view c = siteCaller(stacks, site, hex); !c.empty())
            f(c);
}

} // namespace

RunCallers walkedCallers(const Capture& run)
{
    const StackIndex stacks(run);
    RunCallers out(run.locks.size());
    for (size_t i = 0; i < run.locks.size(); ++i) {
        if (!callerKey(run.locks[i].key))
            continue;
        CallerHashes& h = out[i];
        eachWalkedCaller(stacks, run.locks[i], [&](std::string_view c) { h.push_back(callerHash(c)); });
        std::sort(h.begin(), h.end());
        h.erase(std::unique(h.begin(), h.end()), h.end());
    }
    return out;
}

std::vector<LockAligner::Rename> LockAligner::renames(const Capture& run) const
{
    if (known_.empty())
        return {};
    std::unordered_set<std::string_view> inRun;
    for (const auto& l : run.locks)
        inRun.insert(l.key);
    std::optional<StackIndex> stacks; // made for the first lock with a key no earlier run had
    std::map<std::string, std::vector<size_t>> claims; // earlier key -> the run's locks that fit it
    for (size_t i = 0; i < run.locks.size(); ++i) {
        const Lock& l = run.locks[i];
        const auto k = callerKey(l.key);
        if (!k || known_.count(l.key))
            continue;
        if (!stacks)
            stacks.emplace(run);
        std::set<std::string> fits;
        eachWalkedCaller(*stacks, l, [&](std::string_view caller) {
            if (caller == k->caller)
                return;
            std::string other = keyFor(*k, caller);
            const auto it = known_.find(other);
            if (it != known_.end() && !inRun.count(other) &&
                std::binary_search(it->second.begin(), it->second.end(), callerHash(k->caller)))
                fits.insert(std::move(other));
        });
        if (fits.size() == 1)
            claims[*fits.begin()].push_back(i);
    }
    std::vector<Rename> out;
    for (auto& [key, locks] : claims)
        if (locks.size() == 1)
            out.push_back({locks.front(), key});
    return out;
}

void LockAligner::align(Capture& run, const RunCallers& callers, RunSide side)
{
    for (const Rename& r : renames(run)) {
        Lock& l = run.locks[r.lock];
        ++renamed_[{l.key, r.key}][size_t(side)];
        l.key = r.key;
    }
    learn(run, callers);
}

void LockAligner::learn(const Capture& run, const RunCallers& callers)
{
    for (size_t i = 0; i < run.locks.size(); ++i) {
        if (!callerKey(run.locks[i].key))
            continue;
        CallerHashes& known = known_[run.locks[i].key];
        const CallerHashes& seen = callers.at(i);
        if (std::includes(known.begin(), known.end(), seen.begin(), seen.end()))
            continue;
        CallerHashes all;
        std::set_union(known.begin(), known.end(), seen.begin(), seen.end(), std::back_inserter(all));
        known = std::move(all);
    }
}

void LockAligner::annotate(Comparison& c) const
{
    std::map<std::string_view, std::vector<std::string>> aliases;
    for (const auto& entry : renamed_)
        aliases[entry.first.second].push_back(entry.first.first);
    for (auto& l : c.locks)
        if (const auto it = aliases.find(l.key); it != aliases.end())
            l.also_keyed = it->second; // renamed_ is ordered: sorted

    for (const auto& [keys, runs] : renamed_)
        for (const size_t side : {size_t{0}, size_t{1}}) {
            if (!runs[side])
                continue;
            const size_t all = side ? c.runs_after : c.runs_before;
            std::string who = side ? "after" : "before";
            if (all > 1)
                who += " (" + std::to_string(runs[side]) + " of " + std::to_string(all) + " runs)";
            c.notes.push_back(who + ": " + keys.first + " compared as " + keys.second
                + ", the same lock keyed by another of its callers (each key's caller is a walked "
                  "caller of the other lock)");
        }
}

} // namespace lockscope::reports::detail
