// SPDX-License-Identifier: GPL-2.0-or-later
#include "lockscope/reports/compare.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <map>
#include <stdexcept>

#include "lockscope/capture/calltree.h"
#include "lockscope/reports/report.h"
#include "lockscope/reports/significance.h"
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

namespace {
Delta d(double b, double a) { return Delta{b, a}; }
Delta d(uint64_t b, uint64_t a) { return Delta{double(b), double(a)}; }

// Δ% used for the effect floor; a change from zero counts as infinitely large.
double effectPct(const Delta& x)
{
    if (auto p = x.pct())
        return *p;
    return x.after == 0.0 ? 0.0 : 1e9;
}

Verdict directional(const Significance& s, double change, bool higher_is_better)
{
    if (!s.significant || change == 0.0)
        return Verdict::NoSignificantChange;
    return (change > 0.0) == higher_is_better ? Verdict::Improved : Verdict::Regressed;
}

struct HistVerdict {
    Significance sig;
    Verdict verdict = Verdict::NoSignificantChange;
};

// Lower is better for latency-like histograms; the effect is measured on total.
HistVerdict judge(const Log2Hist& b, const Log2Hist& a, double bs, double as, const Delta& effect,
                  const CompareOptions& o)
{
    HistVerdict h;
    if (std::max(b.count(), a.count()) < o.min_events) {
        h.verdict = Verdict::InsufficientData;
        return h;
    }
    h.sig = testHistograms(b, bs, a, as, effectPct(effect), o.alpha, o.min_effect_pct);
    h.verdict = directional(h.sig, effect.delta(), false);
    return h;
}

// One side's weight on a call path within one lock (lockPaths' sums, keyed by path id).
struct PathWeight {
    uint32_t path = 0;
    uint64_t count = 0, wait_ns = 0, hold_ns = 0;
};

// Sorted by path id. Sums are order independent (wrapping count, saturating times).
std::vector<PathWeight> lockPathWeights(const Lock& lock, InternedCapture& side)
{
    std::vector<PathWeight> w;
    w.reserve(lock.sites.size());
    for (const auto& site : lock.sites)
        w.push_back(PathWeight{side.stack(site.stack_id).path, site.wait.count() ? site.wait.count() : site.hold.count(),
                               site.wait.total(), site.hold.total()});
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
    r.has_hold = !lb.hold.empty() || !la.hold.empty();
    r.wait_before = lb.wait;
    r.wait_after = la.wait;
    r.hold_before = lb.hold;
    r.hold_after = la.hold;
    const HistVerdict wv = judge(lb.wait, la.wait, bs, as, r.total_wait_ns, o);
    const HistVerdict hv = judge(lb.hold, la.hold, bs, as, r.total_hold_ns, o);
    r.wait_test = wv.sig;
    r.hold_test = hv.sig;
    const bool waitData = !lb.wait.empty() || !la.wait.empty();
    r.verdict = waitData ? wv.verdict : hv.verdict;
    if (r.presence == Presence::OnlyBefore)
        r.verdict = Verdict::OnlyBefore;
    else if (r.presence == Presence::OnlyAfter)
        r.verdict = Verdict::OnlyAfter;
    const Delta& basis = waitData ? r.total_wait_ns : r.total_hold_ns;
    if (r.presence == Presence::Both && o.threshold_pct > 0.0)
        r.hidden = std::fabs(effectPct(basis)) < o.threshold_pct;
    static const std::vector<PathWeight> kNoPaths;
    r.paths = diffPaths(bp ? *bp : kNoPaths, ap ? *ap : kNoPaths, o.paths_per_lock, table);
    return r;
}

std::vector<LatencyDelta> latencyDeltas(const std::vector<LatencyEntry>& before,
                                        const std::vector<LatencyEntry>& after, double bs, double as,
                                        const CompareOptions& o)
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
        if (r.presence == Presence::Both) {
            // Per-call latency is what matters for a syscall: test shape only.
            if (std::max(b.latency.count(), a.latency.count()) < o.min_events) {
                r.verdict = Verdict::InsufficientData;
            } else {
                const ChiSquareResult chi = chiSquareHomogeneity(b.latency, a.latency);
                r.test.chi_square = chi.statistic;
                r.test.dof = chi.dof;
                r.test.shape_p = r.test.p_value = chi.p_value;
                r.test.significant = chi.p_value < o.alpha && std::fabs(effectPct(r.avg_ns)) >= o.min_effect_pct;
                r.verdict = directional(r.test, r.avg_ns.delta(), false);
            }
        } else {
            r.verdict = r.presence == Presence::OnlyBefore ? Verdict::OnlyBefore : Verdict::OnlyAfter;
        }
        out.push_back(std::move(r));
    }
    std::stable_sort(out.begin(), out.end(), [](const LatencyDelta& x, const LatencyDelta& y) {
        return std::max(x.calls.before, x.calls.after) > std::max(y.calls.before, y.calls.after);
    });
    (void)bs;
    (void)as;
    return out;
}

// Two-proportion z-test: are k1/n1 and k2/n2 the same share?
double proportionTest(uint64_t k1, uint64_t n1, uint64_t k2, uint64_t n2)
{
    if (!n1 || !n2)
        return 1.0;
    const double p1 = double(k1) / double(n1), p2 = double(k2) / double(n2);
    const double p = double(k1 + k2) / double(n1 + n2);
    const double se = std::sqrt(p * (1.0 - p) * (1.0 / double(n1) + 1.0 / double(n2)));
    if (se == 0.0)
        return p1 == p2 ? 1.0 : 0.0;
    return std::erfc(std::fabs(p1 - p2) / se / std::sqrt(2.0));
}

MetricDelta shareMetric(const std::string& name, uint64_t kb, uint64_t nb, uint64_t ka, uint64_t na,
                        const CompareOptions& o)
{
    MetricDelta m;
    m.name = name;
    m.unit = "%";
    m.value = d(nb ? 100.0 * double(kb) / double(nb) : 0.0, na ? 100.0 * double(ka) / double(na) : 0.0);
    Significance s;
    s.p_value = s.rate_p = proportionTest(kb, nb, ka, na);
    s.significant = s.p_value < o.alpha && std::fabs(effectPct(m.value)) >= o.min_effect_pct;
    m.verdict = (nb && na) ? directional(s, m.value.delta(), false) : Verdict::InsufficientData;
    return m;
}

// Direction of a workload figure from its name: throughput-like figures are
// better higher, latency/time-like ones lower; others are shown without a verdict.
std::optional<bool> higherIsBetter(const std::string& name)
{
    std::string n = name;
    std::transform(n.begin(), n.end(), n.begin(), [](unsigned char c) { return char(std::tolower(c)); });
    for (const char* w : {"ops", "per_sec", "throughput", "iterations", "rate", "bandwidth", "qps", "rps"})
        if (n.find(w) != std::string::npos)
            return true;
    for (const char* w : {"latency", "_ns", "_us", "_ms", "time", "seconds", "wait", "errors", "failures"})
        if (n.find(w) != std::string::npos)
            return false;
    return std::nullopt;
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

    SideTree() { nodes_.emplace_back(); }

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

SideTree sideTree(const Capture& capture, InternedCapture& side)
{
    SideTree t;
    for (const auto& lock : capture.locks)
        for (const auto& site : lock.sites) {
            const InternedCapture::Entry& e = side.stack(site.stack_id);
            t.add(side.frames(e), e.size,
                  Weights{site.wait.count() ? site.wait.count() : site.hold.count(), site.wait.total(),
                          site.hold.total()});
        }
    return t;
}

void addTree(DiffTree& t, FlatIndex& index, const FrameTable& table, const SideTree& src, uint32_t srcId,
             uint32_t dst, bool isAfter)
{
    const SideTree::Node& n = src.node(srcId);
    DiffNode& dn = t.nodes[dst];
    (isAfter ? dn.after_wait_ns : dn.before_wait_ns) += n.total.wait_ns;
    (isAfter ? dn.after_hold_ns : dn.before_hold_ns) += n.total.hold_ns;
    (isAfter ? dn.after_count : dn.before_count) += n.total.count;
    for (uint32_t c = n.firstChild; c != SideTree::kNone; c = src.node(c).next) {
        const uint32_t frame = src.node(c).frame;
        const auto [id, inserted] = index.tryEmplace(uint64_t{dst} << 32 | frame, uint32_t(t.nodes.size()));
        if (inserted) {
            DiffNode nn;
            nn.function = table.frame(frame).name;
            nn.module = table.frame(frame).module;
            nn.parent = dst;
            t.nodes.push_back(std::move(nn));
            t.nodes[dst].children.push_back(id);
        }
        addTree(t, index, table, src, c, id, isAfter);
    }
}
} // namespace

Comparison compare(const Capture& before, const Capture& after, const CompareOptions& o)
{
    Comparison c;
    c.options = o;
    c.before = Side{before.meta, before.stats, before.workload, before.probes};
    c.after = Side{after.meta, after.stats, after.workload, after.probes};
    const double bs = before.meta.duration_s, as = after.meta.duration_s;

    // Warnings: anything that makes the two sides less comparable.
    for (auto& w : captureWarnings(before, "before (" + before.meta.label + ")"))
        c.warnings.push_back(std::move(w));
    for (auto& w : captureWarnings(after, "after (" + after.meta.label + ")"))
        c.warnings.push_back(std::move(w));
    if (bs > 0.0 && as > 0.0 && std::fabs(bs - as) / std::max(bs, as) > 0.1)
        c.warnings.push_back("durations differ (" + std::to_string(bs) + " s vs " + std::to_string(as) +
                             " s): totals are not directly comparable; compare averages and rates");
    if (!before.meta.kernel_release.empty() && before.meta.kernel_release == after.meta.kernel_release &&
        before.meta.kernel_build_id == after.meta.kernel_build_id)
        c.warnings.push_back("both captures come from the same kernel build (" + before.meta.kernel_release +
                             "): differences are run-to-run noise or workload changes");
    std::map<std::string, std::pair<bool, bool>> probeState;
    for (const auto& p : before.probes)
        probeState[p.name].first = p.attached;
    for (const auto& p : after.probes)
        probeState[p.name].second = p.attached;
    for (const auto& [name, st] : probeState)
        if (st.first != st.second)
            c.warnings.push_back("probe " + name + " attached only " + (st.first ? "before" : "after") +
                                 ": its figures are missing on the other side");

    // Locks, matched by key.
    std::map<std::string, std::pair<const Lock*, const Lock*>> byKey;
    for (const auto& l : before.locks)
        byKey[l.key].first = &l;
    for (const auto& l : after.locks)
        byKey[l.key].second = &l;
    FrameTable frames;
    InternedCapture bi(before, frames), ai(after, frames);
    std::vector<std::vector<PathWeight>> pathsB, pathsA;
    pathsB.reserve(before.locks.size());
    pathsA.reserve(after.locks.size());
    for (const auto& l : before.locks)
        pathsB.push_back(lockPathWeights(l, bi));
    for (const auto& l : after.locks)
        pathsA.push_back(lockPathWeights(l, ai));
    frames.finishLabels();
    Log2Hist allWaitB, allWaitA, allHoldB, allHoldA;
    for (const auto& l : before.locks) {
        allWaitB.merge(l.wait);
        allHoldB.merge(l.hold);
    }
    for (const auto& l : after.locks) {
        allWaitA.merge(l.wait);
        allHoldA.merge(l.hold);
    }
    c.locks.reserve(byKey.size());
    auto pathsOf = [](const Lock* l, const Capture& cap, const std::vector<std::vector<PathWeight>>& p) {
        return l ? &p[size_t(l - cap.locks.data())] : nullptr;
    };
    for (const auto& [key, pair] : byKey)
        c.locks.push_back(lockDelta(pair.first, pair.second, pathsOf(pair.first, before, pathsB),
                                    pathsOf(pair.second, after, pathsA), frames, bs, as, o));
    std::stable_sort(c.locks.begin(), c.locks.end(), [](const LockDelta& x, const LockDelta& y) {
        const double mx = std::max(x.total_wait_ns.before, x.total_wait_ns.after);
        const double my = std::max(y.total_wait_ns.before, y.total_wait_ns.after);
        if (mx != my)
            return mx > my;
        const double hx = std::max(x.total_hold_ns.before, x.total_hold_ns.after);
        const double hy = std::max(y.total_hold_ns.before, y.total_hold_ns.after);
        return hx != hy ? hx > hy : x.key < y.key;
    });

    // Headline figures over all locks.
    auto histMetric = [&](const char* name, const char* unit, Delta value, const Log2Hist& hb,
                          const Log2Hist& ha) {
        MetricDelta m{name, unit, value, false, Verdict::NoSignificantChange};
        m.verdict = judge(hb, ha, bs, as, value, o).verdict;
        c.headline.push_back(std::move(m));
    };
    histMetric("contentions", "", d(allWaitB.count(), allWaitA.count()), allWaitB, allWaitA);
    histMetric("total_wait", "ns", d(allWaitB.total(), allWaitA.total()), allWaitB, allWaitA);
    histMetric("avg_wait", "ns", d(allWaitB.mean(), allWaitA.mean()), allWaitB, allWaitA);
    histMetric("p99_wait", "ns", d(allWaitB.percentile(99), allWaitA.percentile(99)), allWaitB, allWaitA);
    if (!allHoldB.empty() || !allHoldA.empty()) {
        histMetric("total_hold", "ns", d(allHoldB.total(), allHoldA.total()), allHoldB, allHoldA);
        histMetric("avg_hold", "ns", d(allHoldB.mean(), allHoldA.mean()), allHoldB, allHoldA);
    }
    if (before.cpu.samples || after.cpu.samples)
        c.headline.push_back(shareMetric("cpu_lock_share", before.cpu.lock_samples, before.cpu.samples,
                                         after.cpu.lock_samples, after.cpu.samples, o));

    // Workload figures present on both sides.
    const auto wb = numericFields(before.workload.results);
    const auto wa = numericFields(after.workload.results);
    for (const auto& fb : wb) {
        auto it = std::find_if(wa.begin(), wa.end(), [&](const NumericField& f) { return f.name == fb.name; });
        if (it == wa.end())
            continue;
        MetricDelta m;
        m.name = fb.name;
        m.value = d(fb.value, it->value);
        const auto dir = higherIsBetter(fb.name);
        m.higher_is_better = dir.value_or(true);
        // A single run per side carries no variance, so only the effect floor applies.
        Significance s;
        s.p_value = 0.0;
        s.significant = std::fabs(effectPct(m.value)) >= o.min_effect_pct;
        m.verdict = dir ? directional(s, m.value.delta(), *dir) : Verdict::NoSignificantChange;
        c.workload.push_back(std::move(m));
    }

    // CPU share of the hottest leaves (the perf-top figure).
    std::map<std::string, std::pair<uint64_t, uint64_t>> leaves;
    for (const auto& l : before.cpu.top_leaves)
        leaves[l.function].first += l.samples;
    for (const auto& l : after.cpu.top_leaves)
        leaves[l.function].second += l.samples;
    for (const auto& [fn, s] : leaves) {
        MetricDelta m = shareMetric(fn, s.first, before.cpu.samples, s.second, after.cpu.samples, o);
        // More CPU in ordinary work is not worse; only lock functions get a direction.
        if (!isLockFunction(fn) && fn.find("spin_lock") == std::string::npos &&
            m.verdict != Verdict::InsufficientData)
            m.verdict = Verdict::NoSignificantChange;
        c.cpu_leaves.push_back(std::move(m));
    }
    std::stable_sort(c.cpu_leaves.begin(), c.cpu_leaves.end(), [](const MetricDelta& x, const MetricDelta& y) {
        return std::max(x.value.before, x.value.after) > std::max(y.value.before, y.value.after);
    });
    if (c.cpu_leaves.size() > 10)
        c.cpu_leaves.resize(10);

    c.syscalls = latencyDeltas(before.syscalls, after.syscalls, bs, as, o);
    c.functions = latencyDeltas(before.functions, after.functions, bs, as, o);

    // Paths over all locks (summed per lock in lock order, as lockPaths rows
    // were), and the differential tree.
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
    addAll(pathsB, false);
    addAll(pathsA, true);
    size_t used = 0;
    for (size_t p = 0; p < all.size(); ++p)
        if (seen[p])
            all[used++] = all[p];
    all.resize(used);
    c.paths = topPaths(all, o.top_paths, frames);

    const SideTree tb = sideTree(before, bi), ta = sideTree(after, ai);
    c.tree.nodes.reserve(std::max(tb.size(), ta.size()));
    c.tree.nodes.emplace_back();
    FlatIndex index(std::max(tb.size(), ta.size()));
    addTree(c.tree, index, frames, tb, 0, 0, false);
    addTree(c.tree, index, frames, ta, 0, 0, true);
    return c;
}

std::vector<std::string> regressionsBeyond(const Comparison& c, double pct)
{
    std::vector<std::string> out;
    auto pctText = [](const Delta& x) {
        const auto p = x.pct();
        return p ? std::to_string(int(std::lround(*p))) + "%" : std::string("new");
    };
    for (const auto& m : c.headline)
        if (m.verdict == Verdict::Regressed && (m.name == "total_wait" || m.name == "cpu_lock_share") &&
            std::fabs(effectPct(m.value)) >= pct)
            out.push_back(m.name + " regressed by " + pctText(m.value));
    for (const auto& m : c.workload)
        if (m.verdict == Verdict::Regressed && std::fabs(effectPct(m.value)) >= pct)
            out.push_back("workload " + m.name + " regressed by " + pctText(m.value));
    const double base = std::max(1.0, c.headline.size() > 1 ? c.headline[1].value.before : 1.0);
    for (const auto& l : c.locks) {
        if (l.verdict == Verdict::Regressed && std::fabs(effectPct(l.total_wait_ns)) >= pct)
            out.push_back("lock " + l.key + " total wait regressed by " + pctText(l.total_wait_ns));
        else if (l.verdict == Verdict::OnlyAfter && l.total_wait_ns.after * 100.0 / base >= pct &&
                 l.contentions.after >= double(c.options.min_events))
            out.push_back("lock " + l.key + " is new and adds " +
                          std::to_string(int(std::lround(l.total_wait_ns.after * 100.0 / base))) +
                          "% of the baseline's total wait");
    }
    return out;
}

} // namespace lockscope::reports
