// SPDX-License-Identifier: GPL-2.0-or-later
#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include "compare_internal.h"
#include "lockscope/capture/virtualization.h"
#include "lockscope/reports/format.h"

// Warnings that inform: a probe skipped for the same reason on both sides is
// one line per cause, not one per probe and side; a side's lost, failed and
// estimated data is one line with each share of its events.
namespace lockscope::reports::detail {

namespace {
// A third decimal keeps a tiny loss from reading as "0.00%".
std::string share(double pct) { return fmt::percentValue(pct, pct > 0.0 && pct < 0.01 ? 3 : 2); }

std::string sideName(const char* side, size_t runs)
{
    return std::string(side) + (runs > 1 ? " (" + std::to_string(runs) + " runs)" : "");
}

// A probe's state over a side's runs: attached in every run, or the first reason it was skipped.
struct ProbeState {
    bool seen = false;
    bool skipped = false;
    bool offByChoice = false;
    std::string reason;
};

std::map<std::string, ProbeState> probeStates(const std::vector<const Capture*>& runs)
{
    std::map<std::string, ProbeState> out;
    for (const Capture* run : runs)
        for (const auto& p : run->probes) {
            ProbeState& s = out[p.name];
            s.seen = true;
            if (!p.attached && !s.skipped) {
                s.skipped = true;
                s.offByChoice = lockscope::offByChoice(p);
                s.reason = p.reason.empty() ? "no reason recorded" : p.reason;
            }
        }
    return out;
}

std::string joinNames(const std::vector<std::string>& names)
{
    std::string s;
    for (const auto& n : names)
        s += (s.empty() ? "" : ", ") + n;
    return s;
}

void probeWarnings(std::vector<std::string>& w, const std::vector<const Capture*>& base,
                   const std::vector<const Capture*>& patched)
{
    const auto b = probeStates(base), a = probeStates(patched);
    std::set<std::string> names;
    for (const auto& [n, s] : b)
        names.insert(n);
    for (const auto& [n, s] : a)
        names.insert(n);
    // cause -> probes, for skips shared by both sides and for each side's own.
    std::map<std::string, std::vector<std::string>> both, onlyBefore, onlyAfter;
    for (const auto& n : names) {
        const ProbeState pb = b.count(n) ? b.at(n) : ProbeState{};
        const ProbeState pa = a.count(n) ? a.at(n) : ProbeState{};
        if (pb.skipped && pa.skipped && pb.reason == pa.reason) {
            if (!pb.offByChoice) // off on both sides as asked: nothing to compare, nothing to warn of
                both[pb.reason].push_back(n);
        } else {
            if (pb.skipped)
                onlyBefore[pb.reason].push_back(n);
            if (pa.skipped)
                onlyAfter[pa.reason].push_back(n);
            if (pb.seen && pa.seen && pb.skipped != pa.skipped)
                w.push_back("probe " + n + " attached only " + (pb.skipped ? "after" : "before") +
                            ": its figures are missing on the other side");
        }
    }
    auto lines = [&](const std::map<std::string, std::vector<std::string>>& byCause, const std::string& where) {
        for (const auto& [cause, probes] : byCause)
            w.push_back(std::to_string(probes.size()) + (probes.size() == 1 ? " probe" : " probes") +
                        " not attached " + where + ": " + cause + " (" + joinNames(probes) + ")");
    };
    lines(both, "on either side");
    lines(onlyBefore, "before");
    lines(onlyAfter, "after");
}

void qualityLine(std::vector<std::string>& w, const char* side, const std::vector<const Capture*>& runs,
                 const DataQuality& q)
{
    Stats s;
    for (const Capture* r : runs)
        s += r->stats;
    std::vector<std::string> parts;
    auto ofEvents = [&](uint64_t n, const char* what) {
        if (n)
            parts.push_back(share(q.events ? 100.0 * double(n) / double(q.events) : 100.0) + " " + what + " (" +
                            std::to_string(n) + ")");
    };
    if (q.lost)
        parts.push_back(share(q.lostPct()) + " of events lost (" + std::to_string(q.lost) + "): counts undercount");
    if (q.stack_failures)
        parts.push_back(std::to_string(q.stack_failures) + " stack captures failed (" + share(q.stackFailurePct()) +
                        " of " + std::to_string(q.lock_events) + " lock events): no call path");
    ofEvents(s.map_full, "map-full drops");
    ofEvents(s.map_busy, "busy-map drops");
    ofEvents(s.unmatched, "unmatched ends");
    ofEvents(s.recursion_misses, "probe runs skipped on re-entry");
    ofEvents(s.impossible_holds, "impossible holds dropped");
    if (parts.empty())
        return;
    std::string line = sideName(side, runs.size()) + ", of " + std::to_string(q.events) + " events: ";
    for (size_t i = 0; i < parts.size(); ++i)
        line += (i ? "; " : "") + parts[i];
    w.push_back(line);
}

void emptyRuns(std::vector<std::string>& w, const char* side, const std::vector<const Capture*>& runs)
{
    for (size_t i = 0; i < runs.size(); ++i) {
        const Capture& c = *runs[i];
        if (c.locks.empty() && c.syscalls.empty() && c.functions.empty() && c.cpu.samples == 0)
            w.push_back(std::string(side) + (runs.size() > 1 ? " run " + std::to_string(i + 1) : "") + " (" +
                        c.meta.label + ") holds no lock, syscall or CPU data (was the workload contended?)");
    }
}
// One line when either side's times are emulated or its vCPUs overcommitted,
// and one when the two sides were recorded on different kinds of machine.
void virtualizationWarnings(std::vector<std::string>& w, const std::vector<const Capture*>& base,
                            const std::vector<const Capture*>& patched)
{
    auto caveated = [](const std::vector<const Capture*>& side) {
        return std::any_of(side.begin(), side.end(),
                           [](const Capture* c) { return !timesCaveat(c->meta.virtualization).empty(); });
    };
    const Virtualization& b = base.front()->meta.virtualization;
    const Virtualization& a = patched.front()->meta.virtualization;
    if (caveated(base) || caveated(patched)) {
        auto where = [](const Virtualization& v) {
            auto d = describeVirtualization(v);
            return d.empty() ? std::string("not recorded") : d;
        };
        w.push_back("waits include vCPU preemption by the host: compare shapes and counts, not absolute times "
                    "(before: " + where(b) + "; after: " + where(a) + ")");
    }
    if (auto differ = recordedDifferently(b, a); !differ.empty())
        w.push_back(differ);
}
} // namespace

std::vector<std::string> setNotes(const std::vector<const Capture*>& base, const std::vector<const Capture*>& patched,
                                  const DataQuality& qb, const DataQuality& qa)
{
    std::vector<std::string> n;
    auto side = [&](const char* name, const std::vector<const Capture*>& runs, const DataQuality& q) {
        Stats s;
        for (const Capture* r : runs)
            s += r->stats;
        if (q.waits_untimed)
            n.push_back(sideName(name, runs.size()) + ": " + share(q.untimedPct()) + " of waits untimed (" +
                        std::to_string(q.waits_untimed) + "): their times are estimated from the timed waits of their lock");
        if (s.stacks_unsampled)
            n.push_back(sideName(name, runs.size()) + ": " + std::to_string(s.stacks_unsampled) +
                        " waits and holds not walked (stack budget): each lock's call paths share them out in "
                        "proportion to its walked ones");
    };
    side("before", base, qb);
    side("after", patched, qa);
    return n;
}

std::vector<std::string> setWarnings(const std::vector<const Capture*>& base, const std::vector<const Capture*>& patched,
                                     const DataQuality& qb, const DataQuality& qa)
{
    std::vector<std::string> w;
    qualityLine(w, "before", base, qb);
    qualityLine(w, "after", patched, qa);
    emptyRuns(w, "before", base);
    emptyRuns(w, "after", patched);
    probeWarnings(w, base, patched);
    double lo = INFINITY, hi = 0.0;
    for (const auto* side : {&base, &patched})
        for (const Capture* c : *side)
            if (c->meta.duration_s > 0.0) {
                lo = std::min(lo, c->meta.duration_s);
                hi = std::max(hi, c->meta.duration_s);
            }
    if (hi > 0.0 && (hi - lo) / hi > 0.1)
        w.push_back("capture durations differ (" + std::to_string(lo) + " s to " + std::to_string(hi) +
                    " s): totals are not directly comparable; the per-second figures are");
    const Meta& b = base.front()->meta;
    const Meta& a = patched.front()->meta;
    virtualizationWarnings(w, base, patched);
    if (!b.kernel_release.empty() && b.kernel_release == a.kernel_release && b.kernel_build_id == a.kernel_build_id)
        w.push_back("both sides come from the same kernel build (" + b.kernel_release +
                    "): differences are run-to-run noise or workload changes");
    return w;
}

} // namespace lockscope::reports::detail
