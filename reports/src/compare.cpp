// SPDX-License-Identifier: GPL-2.0-or-later
#include "lockscope/reports/compare.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <future>
#include <map>
#include <optional>
#include <span>
#include <stdexcept>
#include <utility>

#include "lockscope/capture/calltree.h"
#include "lockscope/capture/child_lists.h"
#include "lockscope/capture/site_shares.h"
#include "lockscope/reports/report.h"
#include "lockscope/reports/significance.h"
#include "compare_internal.h"
#include "interned_stacks.h"
#include "paths.h"
#include "warnings.h"

namespace lockscope::reports {

std::optional<double> Delta::pct() const noexcept
{
    if (before == 0.0)
        return std::nullopt;
    return (after - before) / std::fabs(before) * 100.0;
}

const char* toString(Verdict v) noexcept
{
    switch (v) {
    case Verdict::Improved: return "improved";
    case Verdict::Regressed: return "regressed";
    case Verdict::NoSignificantChange: return "no significant change";
    case Verdict::InsufficientData: return "insufficient data";
    case Verdict::OnlyBefore: return "only before";
    case Verdict::OnlyAfter: return "only after";
    case Verdict::Withheld: return "withheld";
    case Verdict::NoVerdict: return "no verdict";
    }
    return "?";
}

const char* toString(TestKind t) noexcept
{
    switch (t) {
    case TestKind::None: return "none";
    case TestKind::WelchRuns: return "Welch t over runs";
    case TestKind::EventHistograms: return "chi-square+Poisson on events";
    case TestKind::EventProportion: return "proportion z on samples";
    case TestKind::EventShape: return "chi-square on calls";
    case TestKind::QuasiPoissonRuns: return "quasi-Poisson rate over runs";
    case TestKind::OneRunAgainstRuns: return "t of one run against the other side's runs";
    }
    return "?";
}

std::string LatencyDelta::sampledNote() const
{
    if (sample_before <= 1 && sample_after <= 1)
        return "";
    auto one = [](uint32_t n) { return n <= 1 ? std::string("all") : "1 in " + std::to_string(n); };
    if (sample_before == sample_after)
        return " (" + one(sample_before) + " timed)";
    return " (" + one(sample_before) + " -> " + one(sample_after) + " timed)";
}

using detail::effectPct;

namespace {
Delta d(uint64_t b, uint64_t a) { return Delta{double(b), double(a)}; }

// The event tests on two pooled histograms; the effect is measured on `effect`.
Significance eventTest(const Log2Hist& b, const Log2Hist& a, double bs, double as, const Delta& effect,
                       const CompareOptions& o)
{
    if (std::max(b.count(), a.count()) < o.min_events)
        return {};
    return testHistograms(b, bs, a, as, effectPct(effect), o.alpha, o.min_effect_pct);
}

// One side's weight on a call path within one lock (lockPaths' sums, keyed by path id).
struct PathWeight {
    uint32_t path = 0;
    uint64_t count = 0, wait_ns = 0, hold_ns = 0;
};

// Sorted by path id. Sums are order independent (wrapping count, saturating times).
std::vector<PathWeight> lockPathWeights(const std::vector<SiteShare>& sites, InternedCapture& side)
{
    std::vector<PathWeight> w;
    w.reserve(sites.size());
    for (const SiteShare& site : shareOutUnsampled(sites, side.index()).sites)
        w.push_back(PathWeight{side.stack(site.stack_id).path, site.count(), site.wait_ns, site.hold_ns});
    std::sort(w.begin(), w.end(), [](const PathWeight& a, const PathWeight& b) { return a.path < b.path; });
    size_t out = 0;
    for (size_t i = 0; i < w.size(); ++i) {
        if (out && w[out - 1].path == w[i].path) {
            PathWeight& m = w[out - 1];
            m.count += w[i].count;
            m.wait_ns = saturatingAdd(m.wait_ns, w[i].wait_ns);
            m.hold_ns = saturatingAdd(m.hold_ns, w[i].hold_ns);
        } else {
            w[out++] = w[i];
        }
    }
    w.resize(out);
    return w;
}

struct PathAcc {
    uint32_t path = 0;
    Delta wait_ns, hold_ns, count;
};

void addWeight(PathAcc& a, const PathWeight& w, bool isAfter)
{
    (isAfter ? a.wait_ns.after : a.wait_ns.before) += double(w.wait_ns);
    (isAfter ? a.hold_ns.after : a.hold_ns.before) += double(w.hold_ns);
    (isAfter ? a.count.after : a.count.before) += double(w.count);
}

// The most changed paths first (|Δ wait|, then |Δ hold| where wait did not
// change, then the labels); keep == 0 keeps all. Labels are built for the
// kept rows only.
std::vector<PathDelta> topPaths(std::vector<PathAcc>& acc, size_t keep, const FrameTable& table)
{
    auto magnitude = [](const PathAcc& p) {
        return std::fabs(p.wait_ns.delta()) + (p.wait_ns.delta() == 0.0 ? std::fabs(p.hold_ns.delta()) : 0.0);
    };
    auto before = [&](const PathAcc& a, const PathAcc& b) {
        const double ma = magnitude(a), mb = magnitude(b);
        return ma != mb ? ma > mb : table.pathLess(a.path, b.path);
    };
    if (keep && acc.size() > keep) {
        std::partial_sort(acc.begin(), acc.begin() + ptrdiff_t(keep), acc.end(), before);
        acc.resize(keep);
    } else {
        std::sort(acc.begin(), acc.end(), before);
    }
    std::vector<PathDelta> out;
    out.reserve(acc.size());
    for (const auto& a : acc)
        out.push_back(PathDelta{table.pathLabels(a.path), a.wait_ns, a.hold_ns, a.count});
    return out;
}

std::vector<PathDelta> diffPaths(const std::vector<PathWeight>& before, const std::vector<PathWeight>& after,
                                 size_t keep, const FrameTable& table)
{
    std::vector<PathAcc> acc;
    acc.reserve(before.size() + after.size());
    size_t i = 0, j = 0;
    while (i < before.size() || j < after.size()) {
        PathAcc a;
        if (j == after.size() || (i < before.size() && before[i].path < after[j].path)) {
            a.path = before[i].path;
            addWeight(a, before[i++], false);
        } else if (i == before.size() || after[j].path < before[i].path) {
            a.path = after[j].path;
            addWeight(a, after[j++], true);
        } else {
            a.path = before[i].path;
            addWeight(a, before[i++], false);
            addWeight(a, after[j++], true);
        }
        acc.push_back(a);
    }
    return topPaths(acc, keep, table);
}

LockDelta lockDelta(const Lock* b, const Lock* a, const std::vector<PathWeight>* bp,
                    const std::vector<PathWeight>* ap, const FrameTable& table, double bs, double as,
                    const CompareOptions& o)
{
    static const Lock kNone;
    const Lock& lb = b ? *b : kNone;
    const Lock& la = a ? *a : kNone;
    LockDelta r;
    r.key = a ? a->key : b->key;
    r.type = a ? a->type : b->type;
    r.presence = (a && b) ? Presence::Both : (b ? Presence::OnlyBefore : Presence::OnlyAfter);
    r.contentions = d(lb.wait.count(), la.wait.count());
    r.total_wait_ns = d(lb.wait.total(), la.wait.total());
    r.avg_wait_ns = d(lb.wait.mean(), la.wait.mean());
    r.p50_wait_ns = d(lb.wait.percentile(50), la.wait.percentile(50));
    r.p99_wait_ns = d(lb.wait.percentile(99), la.wait.percentile(99));
    r.max_wait_ns = d(lb.wait.max(), la.wait.max());
    r.hold_count = d(lb.hold.count(), la.hold.count());
    r.total_hold_ns = d(lb.hold.total(), la.hold.total());
    r.avg_hold_ns = d(lb.hold.mean(), la.hold.mean());
    r.p99_hold_ns = d(lb.hold.percentile(99), la.hold.percentile(99));
    r.has_wait = !lb.wait.empty() || !la.wait.empty();
    r.has_hold = !lb.hold.empty() || !la.hold.empty();
    r.acquire_count = d(lb.acquire.count(), la.acquire.count());
    r.total_acquire_ns = d(lb.acquire.total(), la.acquire.total());
    r.p99_acquire_ns = d(lb.acquire.percentile(99), la.acquire.percentile(99));
    r.has_acquire = !lb.acquire.empty() || !la.acquire.empty();
    r.acquire_before = lb.acquire;
    r.acquire_after = la.acquire;
    r.wait_before = lb.wait;
    r.wait_after = la.wait;
    r.hold_before = lb.hold;
    r.hold_after = la.hold;
    r.wait_test = eventTest(lb.wait, la.wait, bs, as, r.total_wait_ns, o);
    r.hold_test = eventTest(lb.hold, la.hold, bs, as, r.total_hold_ns, o);
    static const std::vector<PathWeight> kNoPaths;
    r.paths = diffPaths(bp ? *bp : kNoPaths, ap ? *ap : kNoPaths, o.paths_per_lock, table);
    return r;
}

std::vector<LatencyDelta> latencyDeltas(const std::vector<LatencyEntry>& before,
                                        const std::vector<LatencyEntry>& after, const CompareOptions& o)
{
    std::map<std::string, std::pair<const LatencyEntry*, const LatencyEntry*>> byName;
    for (const auto& e : before)
        byName[e.name].first = &e;
    for (const auto& e : after)
        byName[e.name].second = &e;
    std::vector<LatencyDelta> out;
    static const LatencyEntry kNone;
    for (const auto& [name, pair] : byName) {
        const LatencyEntry& b = pair.first ? *pair.first : kNone;
        const LatencyEntry& a = pair.second ? *pair.second : kNone;
        LatencyDelta r;
        r.name = name;
        r.presence = pair.first && pair.second ? Presence::Both
                                               : (pair.first ? Presence::OnlyBefore : Presence::OnlyAfter);
        r.calls = d(b.calls(), a.calls());
        r.avg_ns = d(b.latency.mean(), a.latency.mean());
        r.p99_ns = d(b.latency.percentile(99), a.latency.percentile(99));
        r.errors = d(b.errors, a.errors);
        r.before = b.latency;
        r.after = a.latency;
        r.sample_before = pair.first ? b.sample_period : 1;
        r.sample_after = pair.second ? a.sample_period : 1;
        // Per-call latency is what matters for a syscall: test shape only.
        if (r.presence == Presence::Both && std::max(b.latency.count(), a.latency.count()) >= o.min_events) {
            const ChiSquareResult chi = chiSquareHomogeneity(b.latency, a.latency);
            r.test.chi_square = chi.statistic;
            r.test.dof = chi.dof;
            r.test.shape_p = r.test.p_value = chi.p_value;
            r.test.significant = chi.p_value < o.alpha && std::fabs(effectPct(r.avg_ns)) >= o.min_effect_pct;
        }
        out.push_back(std::move(r));
    }
    std::stable_sort(out.begin(), out.end(), [](const LatencyDelta& x, const LatencyDelta& y) {
        return std::max(x.calls.before, x.calls.after) > std::max(y.calls.before, y.calls.after);
    });
    return out;
}

// One side's top-down call tree over interned frames, built in CallTree's
// order (locks, their sites, frames outermost first) so the differential
// tree gets the node numbering CallTree-based merging gave it.
class SideTree {
public:
    static constexpr uint32_t kNone = UINT32_MAX;
    struct Node {
        uint32_t frame = kNone;
        uint32_t firstChild = kNone, lastChild = kNone, next = kNone;
        Weights total;
    };

    // At most `frames` nodes besides the root: room for them is reserved, so
    // the nodes are never copied to a vector twice the size; the pages the
    // tree does not reach are never touched and cost no memory.
    explicit SideTree(size_t frames = 0)
    {
        nodes_.reserve(frames + 1);
        nodes_.emplace_back();
    }

    void add(const uint32_t* frames, uint32_t n, const Weights& w)
    {
        uint32_t cur = 0;
        nodes_[0].total += w;
        for (uint32_t i = 0; i < n; ++i) {
            cur = child(cur, frames[i]);
            nodes_[cur].total += w;
        }
    }
    const Node& node(uint32_t id) const { return nodes_[id]; }
    size_t size() const noexcept { return nodes_.size(); }
    // Drops what only adding needed: both sides' trees are held while the
    // differential tree is built, compare's peak.
    void finishBuilding() { index_ = FlatIndex(); }

private:
    uint32_t child(uint32_t parent, uint32_t frame)
    {
        const auto [id, inserted] = index_.tryEmplace(uint64_t{parent} << 32 | frame, uint32_t(nodes_.size()));
        if (inserted) {
            Node n;
            n.frame = frame;
            nodes_.push_back(n);
            Node& p = nodes_[parent];
            if (p.lastChild == kNone)
                p.firstChild = id;
            else
                nodes_[p.lastChild].next = id;
            p.lastChild = id;
        }
        return id;
    }

    std::vector<Node> nodes_;
    FlatIndex index_;
};

// Reads only what interning the side's paths left (lockPathWeights interned
// every stack its sites' shares name), so both sides' trees can be made at once.
SideTree sideTree(const detail::SiteLists& locks, const InternedCapture& side)
{
    size_t frames = 0; // a bound: sharing out keeps some of the sites
    for (const auto& sites : locks)
        for (const SiteShare& site : sites)
            if (const Stack* st = side.index().find(site.stack_id))
                frames += st->frames.size(); // what interning it gives (FrameTable::intern)
    SideTree t(frames);
    for (const auto& sites : locks)
        for (const SiteShare& site : shareOutUnsampled(sites, side.index()).sites) {
            const InternedCapture::Entry& e = side.interned(site.stack_id);
            t.add(side.frames(e), e.size, Weights{site.count(), site.wait_ns, site.hold_ns});
        }
    t.finishBuilding();
    return t;
}

void addTotals(DiffNode& n, const Weights& w, bool isAfter)
{
    (isAfter ? n.after_wait_ns : n.before_wait_ns) += w.wait_ns;
    (isAfter ? n.after_hold_ns : n.before_hold_ns) += w.hold_ns;
    (isAfter ? n.after_count : n.before_count) += w.count;
}

// The before side's tree, copied: its nodes are the differential tree's
// first ones, numbered as its depth-first walk meets them.
void copyBefore(DiffTree& t, const SideTree& src, uint32_t srcId, uint32_t dst)
{
    addTotals(t.nodes[dst], src.node(srcId).total, false);
    for (uint32_t c = src.node(srcId).firstChild; c != SideTree::kNone; c = src.node(c).next) {
        DiffNode n;
        n.frame = src.node(c).frame + 1; // the tree's frames are the table's after the root's
        n.parent = dst;
        const auto id = uint32_t(t.nodes.size());
        t.nodes.push_back(n);
        copyBefore(t, src, c, id);
    }
}

// A copied before node's children by frame, for the after side's children
// to find theirs. A node can have thousands (the root's): past a few they
// are sorted and searched.
class BeforeChildren {
public:
    BeforeChildren(const DiffTree& t, std::span<const uint32_t> ids)
        : t_(t)
        , ids_(ids)
    {
        if (ids.size() <= kScan)
            return;
        sorted_.reserve(ids.size());
        for (uint32_t id : ids)
            sorted_.emplace_back(t.nodes[id].frame, id);
        std::sort(sorted_.begin(), sorted_.end());
    }
    std::optional<uint32_t> find(uint32_t frame) const
    {
        if (ids_.size() <= kScan) {
            for (uint32_t id : ids_)
                if (t_.nodes[id].frame == frame)
                    return id;
            return std::nullopt;
        }
        const auto it = std::lower_bound(sorted_.begin(), sorted_.end(), std::pair(frame, uint32_t { 0 }));
        if (it == sorted_.end() || it->first != frame)
            return std::nullopt;
        return it->second;
    }

private:
    static constexpr size_t kScan = 8;
    const DiffTree& t_;
    std::span<const uint32_t> ids_;
    std::vector<std::pair<uint32_t, uint32_t>> sorted_;
};

// The after side's tree, merged in: a node meets the before node of the
// same frame under the same parent, else it is new, numbered as the after
// tree's depth-first walk meets it (the order a (parent, frame) index gave,
// without the index: 25 MB for the bench's pair, the peak of compare).
// beginOf/beforeKids: the copied before nodes' children (layOutChildren),
// for the nodes below beginOf.size() - 1; nodes new in the after tree have none there.
void mergeAfter(DiffTree& t, const std::vector<uint32_t>& beginOf, const std::vector<uint32_t>& beforeKids,
    const SideTree& src, uint32_t srcId, uint32_t dst)
{
    addTotals(t.nodes[dst], src.node(srcId).total, true);
    const SideTree::Node& n = src.node(srcId);
    if (n.firstChild == SideTree::kNone)
        return;
    std::span<const uint32_t> kids;
    if (dst + 1 < beginOf.size())
        kids = { beforeKids.data() + beginOf[dst], beginOf[dst + 1] - beginOf[dst] };
    const BeforeChildren before(t, kids);
    for (uint32_t c = n.firstChild; c != SideTree::kNone; c = src.node(c).next) {
        const uint32_t frame = src.node(c).frame + 1;
        std::optional<uint32_t> id = before.find(frame);
        if (!id) {
            DiffNode nn;
            nn.frame = frame;
            nn.parent = dst;
            id = uint32_t(t.nodes.size());
            t.nodes.push_back(nn);
        }
        mergeAfter(t, beginOf, beforeKids, src, c, *id);
    }
}
// Paths over all locks, summed per lock in lock order (as lockPaths rows
// were), the top `keep` of them.
std::vector<PathDelta> pathsOverAllLocks(const std::vector<std::vector<PathWeight>>& before,
                                         const std::vector<std::vector<PathWeight>>& after, const FrameTable& frames,
                                         size_t keep)
{
    std::vector<PathAcc> all(frames.pathCount());
    std::vector<bool> seen(frames.pathCount(), false);
    auto addAll = [&](const std::vector<std::vector<PathWeight>>& side, bool isAfter) {
        for (const auto& lockPathsOfSide : side)
            for (const auto& w : lockPathsOfSide) {
                all[w.path].path = w.path;
                seen[w.path] = true;
                addWeight(all[w.path], w, isAfter);
            }
    };
    addAll(before, false);
    addAll(after, true);
    size_t used = 0;
    for (size_t p = 0; p < all.size(); ++p)
        if (seen[p])
            all[used++] = all[p];
    all.resize(used);
    return topPaths(all, keep, frames);
}

// The differential tree of both sides' call trees; each side's tree is
// freed once added (compare's peak is the end of this step).
DiffTree diffTree(SideTree before, SideTree after, const FrameTable& frames)
{
    DiffTree tree;
    tree.frames.reserve(frames.frameCount() + 1);
    for (uint32_t f = 0; f < frames.frameCount(); ++f)
        tree.frames.push_back(DiffFrame { frames.frame(f).name, frames.frame(f).module });
    // Room for both sides' nodes: pages never filled cost no memory, and a
    // tree that outgrew the larger side was copied at twice its size.
    tree.nodes.reserve(before.size() + after.size());
    tree.nodes.emplace_back();
    copyBefore(tree, before, 0, 0);
    before = SideTree();
    std::vector<uint32_t> beginOf, beforeKids;
    layOutChildren(tree.nodes, beginOf, beforeKids);
    mergeAfter(tree, beginOf, beforeKids, after, 0, 0);
    after = SideTree();
    beginOf = {};
    beforeKids = {};
    tree.linkChildren();
    return tree;
}

} // namespace

void DiffTree::linkChildren()
{
    layOutChildren(nodes, child_begin, child_ids);
}

detail::PooledComparison detail::comparePooled(const PooledSide& sb, const PooledSide& sa, const CompareOptions& o)
{
    const Capture& before = sb.capture;
    const Capture& after = sa.capture;
    Comparison c;
    c.options = o;
    c.before = Side{before.meta, before.stats, before.workload, before.probes};
    c.after = Side{after.meta, after.stats, after.workload, after.probes};
    const double bs = before.meta.duration_s, as = after.meta.duration_s;

    // Locks, matched by key.
    std::map<std::string, std::pair<const Lock*, const Lock*>> byKey;
    for (const auto& l : before.locks)
        byKey[l.key].first = &l;
    for (const auto& l : after.locks)
        byKey[l.key].second = &l;
    FrameTable frames;
    std::optional<InternedCapture> bi(std::in_place, before, frames), ai(std::in_place, after, frames);
    std::vector<std::vector<PathWeight>> pathsB, pathsA;
    pathsB.reserve(before.locks.size());
    pathsA.reserve(after.locks.size());
    for (const auto& sites : sb.sites)
        pathsB.push_back(lockPathWeights(sites, *bi));
    for (const auto& sites : sa.sites)
        pathsA.push_back(lockPathWeights(sites, *ai));
    frames.finishLabels();
    c.locks.reserve(byKey.size());
    auto pathsOf = [](const Lock* l, const Capture& cap, const std::vector<std::vector<PathWeight>>& p) {
        return l ? &p[size_t(l - cap.locks.data())] : nullptr;
    };
    for (const auto& [key, pair] : byKey)
        c.locks.push_back(lockDelta(pair.first, pair.second, pathsOf(pair.first, before, pathsB),
                                    pathsOf(pair.second, after, pathsA), frames, bs, as, o));
    c.syscalls = latencyDeltas(before.syscalls, after.syscalls, o);
    c.functions = latencyDeltas(before.functions, after.functions, o);

    c.paths = pathsOverAllLocks(pathsB, pathsA, frames, o.top_paths);
    // What only the rows and paths needed goes before the trees, the
    // comparison's largest step: it lowers compare's peak. The two sides'
    // trees are made at once, the before side's on a thread of its own.
    pathsB = {};
    pathsA = {};
    auto treeB = std::async(std::launch::async, [&] { return sideTree(sb.sites, *bi); });
    SideTree builtA = sideTree(sa.sites, *ai);
    SideTree builtB = treeB.get();
    bi.reset();
    ai.reset();
    for (const PooledSide* side : {&sb, &sa})
        if (side->spent_stacks)
            std::vector<Stack>().swap(*side->spent_stacks);
    // The differential tree is the comparison's longest step and needs none
    // of the rows: it is made while the caller judges them, on both cores.
    auto tree = std::async(std::launch::async,
                           [b = std::move(builtB), a = std::move(builtA), f = std::move(frames)]() mutable {
                               return diffTree(std::move(b), std::move(a), f);
                           });
    return {std::move(c), std::move(tree)};
}

std::vector<std::string> regressionsBeyond(const Comparison& c, double pct)
{
    std::vector<std::string> out;
    auto pctText = [](const Delta& x) {
        const auto p = x.pct();
        return p ? std::to_string(int(std::lround(*p))) + "%" : std::string("new");
    };
    auto worse = [&](const MetricDelta& m) {
        return m.judgement.verdict == Verdict::Regressed && std::fabs(effectPct(m.value)) >= pct;
    };
    for (const auto& m : c.headline)
        if ((m.name == "wait/s" || m.name == "hold/s" || m.name == "cpu_lock_share") && worse(m))
            out.push_back(m.name.str() + " regressed by " + pctText(m.value));
    for (const auto& m : c.workload)
        if (worse(m))
            out.push_back("workload " + m.name.str() + " regressed by " + pctText(m.value));
    double base = 0.0;
    for (const auto& l : c.locks)
        base += l.total_wait_ns.before;
    base = std::max(1.0, base);
    for (const auto& l : c.locks) {
        const MetricDelta* m = judgedMetric(l);
        if (m && worse(*m))
            out.push_back("lock " + l.key + " " + m->name.str() + " regressed by " + pctText(m->value));
        else if (l.judgement.verdict == Verdict::OnlyAfter && l.total_wait_ns.after * 100.0 / base >= pct &&
                 l.contentions.after >= double(c.options.min_events))
            out.push_back("lock " + l.key + " is new and adds " +
                          std::to_string(int(std::lround(l.total_wait_ns.after * 100.0 / base))) +
                          "% of the baseline's total wait");
    }
    return out;
}

} // namespace lockscope::reports
