// SPDX-License-Identifier: GPL-2.0-or-later
#include <algorithm>
#include <cctype>
#include <cmath>
#include <deque>
#include <functional>
#include <map>
#include <optional>
#include <stdexcept>
#include <utility>

#include "compare_internal.h"
#include "format_util.h"
#include "lock_alignment.h"
#include "lockscope/capture/lock_frames.h"
#include "lockscope/reports/report.h"
#include "lockscope/reports/significance.h"

// The run-statistics layer of compareSets: every figure once per run, its
// spread per side, Welch's t and LKP's range check across runs, and the
// judgement each row carries (verdict + the test that gave it + its p-value).
namespace lockscope::reports {

using detail::effectPct;

namespace {
using Runs = std::vector<const Capture*>;
using Values = std::vector<double>;

// Per second of capture; per run when a capture has no duration (imports).
double perSecond(double v, const Capture& c)
{
    return c.meta.duration_s > 0.0 ? v / c.meta.duration_s : v;
}

FigureRuns runMetric(InternedString name, std::string unit, RunValues b, RunValues a, bool higherIsBetter,
    FigureKind kind = FigureKind::Other, bool directed = true)
{
    FigureRuns f;
    MetricDelta& m = f.figure;
    m.name = name;
    m.unit = std::move(unit);
    m.higher_is_better = higherIsBetter;
    m.kind = kind;
    m.directed = directed;
    m.before_runs = RunSummary::of(b.values);
    m.after_runs = RunSummary::of(a.values);
    m.value = Delta{m.before_runs.mean, m.after_runs.mean};
    f.before = std::move(b);
    f.after = std::move(a);
    if (runsCanDecide(m.before_runs.n, m.after_runs.n))
        m.runs_test = runsTest(m.before_runs, m.after_runs);
    return f;
}

FigureRuns runMetric(InternedString name, std::string unit, const Values& b, const Values& a,
    bool higherIsBetter, FigureKind kind = FigureKind::Other, bool directed = true)
{
    return runMetric(name, std::move(unit), RunValues { b, {}, {} }, RunValues { a, {}, {} }, higherIsBetter,
        kind, directed);
}

bool bigEnough(const MetricDelta& m, const CompareOptions& o)
{
    if (m.isPercent())
        return std::fabs(m.value.delta()) >= o.min_effect_pp;
    return std::fabs(effectPct(m.value)) >= o.min_effect_pct;
}

// One run on a side: the event test's p, never a verdict. The test treats
// every event as independent, so any run-to-run difference passes it: one
// run a side of the same kernel (A/A) got a verdict in 53-100% of the pairs
// of five run sets (reports/README.md). LKP calls no change without three
// runs on a side either.
Judgement judgeEvents(const MetricDelta& m, TestKind kind, const Significance& s, const CompareOptions& o)
{
    Judgement j;
    j.basis = m.name;
    j.test = kind;
    j.p_value = s.p_value;
    j.below_effect_floor = s.p_value < o.alpha && !s.significant;
    // Made once and shared by every figure they are the reason of (shared_text.h).
    static const SharedText kOverstates(std::string(detail::kOneRun)
        + "; the event test treats every event as independent and overstates significance");
    static const SharedText kSeesAChange(std::string(detail::kOneRun)
        + ": the event test sees a change, which runs of one kernel also show; record "
          "two or more runs a side, or three or more against one, for a verdict");
    j.reason = kOverstates;
    if (s.significant && m.value.delta() != 0.0) {
        j.verdict = Verdict::NoVerdict;
        j.reason = kSeesAChange;
    }
    return j;
}

Judgement insufficient(InternedString basis, const CompareOptions& o)
{
    Judgement j;
    j.verdict = Verdict::InsufficientData;
    j.basis = basis;
    j.reason = "fewer than " + std::to_string(o.min_events) + " events on each side";
    return j;
}

// Why verdicts on lock figures cannot be trusted: the sides lost very different shares of data.
std::string lossGap(const DataQuality& b, const DataQuality& a, const CompareOptions& o, bool waitTimes)
{
    auto gap = [&](double pb, double pa, const char* what) -> std::string {
        if (std::fabs(pb - pa) <= o.max_loss_gap_pp)
            return "";
        return std::string("the sides lost very different shares of data (") + what + ": " + fmt::percentValue(pb) +
               " before, " + fmt::percentValue(pa) + " after)";
    };
    std::string r = gap(b.lostPct(), a.lostPct(), "events lost");
    if (r.empty())
        r = gap(b.stackFailurePct(), a.stackFailurePct(), "stack captures failed");
    if (r.empty() && waitTimes)
        r = gap(b.untimedPct(), a.untimedPct(), "waits untimed");
    return r;
}

void withhold(Judgement& j, const SharedText& reason)
{
    if (j.test == TestKind::None || reason.empty())
        return;
    j.verdict = Verdict::Withheld;
    j.reason = reason;
}

// One run's data for a lock figure: the lock's histogram (nullptr when the
// lock is absent from the run), the capture, and the run's operation count
// (0 when the workload reports none).
struct RunPoint {
    const Log2Hist* hist;
    const Capture& capture;
    double ops;
};

struct LockFigureDef {
    const char* name;
    const char* unit;
    bool hold;
    FigureKind kind;
    // Lower is better except for the hold count per second, which grows with
    // throughput as much as with contention: it gets no better/worse direction.
    bool directed;
    bool per_op;
    std::function<std::optional<double>(const RunPoint&)> f;
    bool countedEvents() const { return kind != FigureKind::TimePerEvent; }
};

// Per second of capture, or per operation; absent from a run: no waits or
// holds then (0); means and percentiles have no value.
const std::vector<LockFigureDef>& lockFigures()
{
    auto total = [](const RunPoint& r) { return r.hist ? double(r.hist->total()) : 0.0; };
    auto count = [](const RunPoint& r) { return r.hist ? double(r.hist->count()) : 0.0; };
    static const std::vector<LockFigureDef> defs = [&] {
        std::vector<LockFigureDef> d;
        for (bool hold : {false, true}) {
            d.push_back({hold ? "total hold/s" : "total wait/s", "ns/s", hold, FigureKind::TimePerSecond, true, false,
                         [total](const RunPoint& r) -> std::optional<double> { return perSecond(total(r), r.capture); }});
            d.push_back({hold ? "holds/s" : "contentions/s", "/s", hold, FigureKind::EventsPerSecond, !hold, false,
                         [count](const RunPoint& r) -> std::optional<double> { return perSecond(count(r), r.capture); }});
            d.push_back({hold ? "mean hold" : "mean wait", "ns", hold, FigureKind::TimePerEvent, true, false,
                         [](const RunPoint& r) -> std::optional<double> {
                             if (!r.hist || r.hist->empty())
                                 return std::nullopt;
                             return double(r.hist->mean());
                         }});
            d.push_back({hold ? "p99 hold" : "p99 wait", "ns", hold, FigureKind::TimePerEvent, true, false,
                         [](const RunPoint& r) -> std::optional<double> {
                             if (!r.hist || r.hist->empty())
                                 return std::nullopt;
                             return double(r.hist->percentile(99));
                         }});
        }
        // Per operation of the workload: a lock that costs more per operation, whatever the throughput.
        for (bool hold : {false, true}) {
            d.push_back({hold ? "hold time/op" : "wait time/op", "ns/op", hold, FigureKind::TimePerOp, true, true,
                         [total](const RunPoint& r) -> std::optional<double> { return total(r) / r.ops; }});
            d.push_back({hold ? "holds/op" : "waits/1k ops", hold ? "/op" : "/1k ops", hold, FigureKind::EventsPerOp,
                         true, true, [count, hold](const RunPoint& r) -> std::optional<double> {
                             return count(r) / r.ops * (hold ? 1.0 : 1000.0);
                         }});
        }
        return d;
    }();
    return defs;
}

// The workload's operation count of every run, when every run reports one ("ops" > 0).
std::optional<Values> opsPerRun(const Runs& runs)
{
    Values v;
    for (const Capture* r : runs) {
        const auto& res = r->workload.results;
        const auto it = res.is_object() ? res.find("ops") : res.end();
        if (it == res.end() || !it->is_number() || !(it->get<double>() > 0.0))
            return std::nullopt;
        v.push_back(it->get<double>());
    }
    return v;
}

RunValues lockValues(const Runs& runs, const std::vector<detail::RunLocks>& maps,
                     const std::string& key, const LockFigureDef& def, const std::optional<Values>& ops)
{
    RunValues v;
    for (size_t i = 0; i < runs.size(); ++i) {
        const auto it = maps[i].find(key);
        const Lock* l = it == maps[i].end() ? nullptr : it->second;
        const Log2Hist* h = l ? (def.hold ? &l->hold : &l->wait) : nullptr;
        const RunPoint point{h, *runs[i], ops ? (*ops)[i] : 0.0};
        const auto x = def.f(point);
        if (!x)
            continue;
        v.values.push_back(*x);
        if (def.countedEvents()) {
            v.events.push_back(h ? double(h->count()) : 0.0);
            const double d = runs[i]->meta.duration_s;
            v.exposure.push_back(def.per_op ? point.ops : (d > 0.0 ? d : 1.0));
        }
    }
    return v;
}

// The lead figures of a lock's verdict, in the order used when none decides.
std::vector<const char*> leadFigures(const Comparison& c)
{
    if (c.per_op_leads)
        return {"wait time/op", "hold time/op"};
    return {"total wait/s", "total hold/s"};
}

// The strongest well-supported change among the lead figures: decided ones by
// p (then size of change), then a withheld one, then the one with more time.
const MetricDelta* leadFigure(const LockDelta& l, const Comparison& c)
{
    const MetricDelta* best = nullptr;
    auto rank = [](const MetricDelta& m) {
        return m.judgement.decided() ? 0 : m.judgement.verdict == Verdict::Withheld ? 1 : 2;
    };
    auto better = [&](const MetricDelta& x, const MetricDelta& y) {
        if (rank(x) != rank(y))
            return rank(x) < rank(y);
        if (rank(x) == 0 && x.judgement.p_value != y.judgement.p_value)
            return x.judgement.p_value.value_or(1.0) < y.judgement.p_value.value_or(1.0);
        if (rank(x) == 0)
            return std::fabs(effectPct(x.value)) > std::fabs(effectPct(y.value));
        return std::max(x.value.before, x.value.after) > std::max(y.value.before, y.value.after);
    };
    for (const char* name : leadFigures(c))
        if (const MetricDelta* m = lockFigure(l, name); m && (!best || better(*m, *best)))
            best = m;
    return best;
}

// One run on a side: the event tests on wait/s decide; on hold/s when the
// waits are too few to judge and the holds are not: a spinlock's waits hide
// from the tracepoint where few CPUs contend (a lone spinning waiter fires
// none), its holds do not.
bool judgedOnWaits(const LockDelta& l, const CompareOptions& o)
{
    auto enough = [&](const Log2Hist& b, const Log2Hist& a) { return std::max(b.count(), a.count()) >= o.min_events; };
    return l.has_wait && (!l.has_hold || enough(l.wait_before, l.wait_after) || !enough(l.hold_before, l.hold_after));
}

void judgeLockOneRun(
    LockDelta& l, const SharedText& gapWait, const SharedText& gapHold, const CompareOptions& o)
{
    const bool waits = judgedOnWaits(l, o);
    const InternedString basis(waits ? "total wait/s" : "total hold/s");
    MetricDelta* m = nullptr;
    for (auto& r : l.runs)
        if (r.name == basis)
            m = &r;
    const Log2Hist& hb = waits ? l.wait_before : l.hold_before;
    const Log2Hist& ha = waits ? l.wait_after : l.hold_after;
    if (l.presence != Presence::Both || !m) {
        l.judgement.basis = basis;
        l.judgement.verdict = detail::presenceVerdict(l.presence);
    } else if (std::max(hb.count(), ha.count()) < o.min_events) {
        l.judgement = insufficient(basis, o);
    } else {
        l.judgement = judgeEvents(*m, TestKind::EventHistograms, waits ? l.wait_test : l.hold_test, o);
    }
    withhold(l.judgement, waits ? gapWait : gapHold);
    if (m)  // the judged figure's row carries the lock's verdict, so every table shows the same one
        m->judgement = l.judgement;
}

void judgeLocks(Comparison& c, const Runs& base, const Runs& patched, const CompareOptions& o)
{
    const auto mb = detail::runLocks(base), ma = detail::runLocks(patched);
    const SharedText gapWait = lossGap(c.quality_before, c.quality_after, o, true);
    const SharedText gapHold = lossGap(c.quality_before, c.quality_after, o, false);
    const auto opsB = opsPerRun(base), opsA = opsPerRun(patched);
    for (LockDelta& l : c.locks) {
        auto shown = [&](const LockFigureDef& def) {
            return (def.hold ? l.has_hold : l.has_wait) && (!def.per_op || c.per_op);
        };
        // Sized exactly: a figure is ~0.5 KB, and the locks' figures are the comparison's largest part.
        l.runs.reserve(static_cast<size_t>(std::count_if(lockFigures().begin(), lockFigures().end(), shown)));
        for (const auto& def : lockFigures()) {
            if (!shown(def))
                continue;
            FigureRuns f = runMetric(def.name, def.unit, lockValues(base, mb, l.key, def, opsB),
                lockValues(patched, ma, l.key, def, opsA), false, def.kind, def.directed);
            MetricDelta& m = f.figure;
            const Log2Hist& hb = def.hold ? l.hold_before : l.wait_before;
            const Log2Hist& ha = def.hold ? l.hold_after : l.wait_after;
            if (c.varianceKnown() && std::max(hb.count(), ha.count()) < o.min_events)
                m.judgement = insufficient(m.name, o);
            else
                m.judgement = judgeFigure(f, o);
            // A lock seen on one side only and not decided by its figure's test says just that.
            if (c.varianceKnown() && l.presence != Presence::Both && !m.judgement.decided())
                m.judgement.verdict = detail::presenceVerdict(l.presence);
            withhold(m.judgement, def.hold ? gapHold : gapWait);
            if (std::string(def.name) == "p99 wait") { // an estimated tail gets no verdict it cannot support
                m.tail_basis = detail::weakestTailBasis(base, mb, patched, ma, l.key, 99);
                detail::withholdUnsupportedTail(m);
            }
            l.runs.push_back(std::move(m));
        }
        if (c.varianceKnown()) {
            if (const MetricDelta* lead = leadFigure(l, c))
                l.judgement = lead->judgement;
        } else {
            judgeLockOneRun(l, gapWait, gapHold, o);
        }
        const MetricDelta* m = judgedMetric(l);
        if (m && l.presence == Presence::Both && o.threshold_pct > 0.0)
            l.hidden = std::fabs(effectPct(m->value)) < o.threshold_pct;
    }
}

// Operations per second of capture per run, and whether per-op figures lead.
void throughput(Comparison& c, const Runs& base, const Runs& patched, const CompareOptions& o)
{
    const auto opsB = opsPerRun(base), opsA = opsPerRun(patched);
    if (!opsB || !opsA)
        return;
    auto rate = [](const Runs& runs, const Values& ops) {
        double sum = 0.0;
        for (size_t i = 0; i < runs.size(); ++i)
            sum += perSecond(ops[i], *runs[i]);
        return sum / double(runs.size());
    };
    c.per_op = true;
    c.ops_per_s = Delta{rate(base, *opsB), rate(patched, *opsA)};
    c.per_op_leads = c.varianceKnown() && std::fabs(effectPct(c.ops_per_s)) >= o.min_effect_pct;
}

void judgeLatency(std::vector<LatencyDelta>& rows, const Runs& base, const Runs& patched, bool functions,
                  const Comparison& c, const CompareOptions& o)
{
    auto values = [&](const Runs& runs, const std::string& name) {
        Values v;
        for (const Capture* r : runs)
            for (const auto& e : functions ? r->functions : r->syscalls)
                if (e.name == name && !e.latency.empty())
                    v.push_back(double(e.latency.mean()));
        return v;
    };
    for (LatencyDelta& l : rows) {
        FigureRuns f = runMetric("mean latency", "ns", values(base, l.name), values(patched, l.name), false,
            FigureKind::TimePerEvent);
        Judgement& j = f.figure.judgement;
        if (l.presence != Presence::Both) {
            j.basis = f.figure.name;
            j.verdict = detail::presenceVerdict(l.presence);
        } else if (std::max(l.before.count(), l.after.count()) < o.min_events) {
            j = insufficient(f.figure.name, o);
        } else if (c.varianceKnown()) {
            j = judgeFigure(f, o);
        } else {
            j = judgeEvents(f.figure, TestKind::EventShape, l.test, o);
        }
        l.avg_runs = std::move(f.figure);
    }
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

// A CPU share in percent, per run; directed only for lock functions.
MetricDelta shareMetric(const std::string& name, const Runs& base, const Runs& patched,
                        const std::function<uint64_t(const Capture&)>& part, bool directed, const Comparison& c,
                        const CompareOptions& o)
{
    auto values = [&](const Runs& runs, uint64_t& k, uint64_t& n) {
        Values v;
        for (const Capture* r : runs)
            if (r->cpu.samples) {
                v.push_back(100.0 * double(part(*r)) / double(r->cpu.samples));
                k += part(*r);
                n += r->cpu.samples;
            }
        return v;
    };
    uint64_t kb = 0, nb = 0, ka = 0, na = 0;
    const Values vb = values(base, kb, nb), va = values(patched, ka, na);
    FigureRuns f = runMetric(name, "%", vb, va, false, FigureKind::Other, directed);
    MetricDelta& m = f.figure;
    if (!nb || !na) {
        m.judgement.basis = name;
        m.judgement.verdict = Verdict::InsufficientData;
        m.judgement.reason = "no CPU samples on a side";
    } else if (c.varianceKnown()) {
        m.judgement = judgeFigure(f, o);
    } else {
        Significance s;
        s.p_value = s.rate_p = proportionTest(kb, nb, ka, na);
        s.significant = s.p_value < o.alpha && bigEnough(m, o);
        m.judgement = judgeEvents(m, TestKind::EventProportion, s, o);
    }
    return std::move(f.figure);
}

// Direction of a workload figure from the words of its name (split at '_'):
// throughput-like figures are better higher, latency/time-like ones lower;
// others get no direction ("nsops" is a setting, not "ops").
std::optional<bool> higherIsBetter(const std::string& name)
{
    std::string n = name;
    std::transform(n.begin(), n.end(), n.begin(), [](unsigned char ch) { return char(std::tolower(ch)); });
    std::vector<std::string> words(1);
    for (char ch : n) {
        if (ch == '_' || ch == '-' || ch == '.' || ch == '/')
            words.emplace_back();
        else
            words.back() += ch;
    }
    auto has = [&](std::initializer_list<const char*> set) {
        for (const auto& w : words)
            for (const char* s : set)
                if (w == s)
                    return true;
        return false;
    };
    if (has({"ops", "throughput", "iterations", "rate", "bandwidth", "qps", "rps", "tps"}) ||
        n.find("per_sec") != std::string::npos)
        return true;
    if (has({"latency", "ns", "us", "ms", "time", "seconds", "wait", "errors", "failures"}))
        return false;
    return std::nullopt;
}

void workloadMetrics(Comparison& c, const Runs& base, const Runs& patched, const CompareOptions& o)
{
    auto values = [](const Runs& runs) {
        std::map<std::string, Values> v;
        std::vector<std::string> order;
        for (const Capture* r : runs)
            for (const auto& f : numericFields(r->workload.results)) {
                if (!v.count(f.name))
                    order.push_back(f.name);
                v[f.name].push_back(f.value);
            }
        return std::pair{v, order};
    };
    const auto [vb, order] = values(base);
    const auto [va, unused] = values(patched);
    (void)unused;
    for (const auto& name : order) {
        const auto it = va.find(name);
        if (it == va.end())
            continue;
        const auto dir = higherIsBetter(name);
        FigureRuns f = runMetric(
            name, "", vb.at(name), it->second, dir.value_or(true), FigureKind::Other, dir.has_value());
        f.figure.judgement = judgeFigure(f, o);
        c.workload.push_back(std::move(f.figure));
    }
}

void headlineMetrics(Comparison& c, const Runs& base, const Runs& patched, const Capture& pb, const Capture& pa,
                     const CompareOptions& o)
{
    auto allOf = [](const Capture& cap, bool hold) {
        Log2Hist h;
        for (const auto& l : cap.locks)
            h.merge(hold ? l.hold : l.wait);
        return h;
    };
    const SharedText gapWait = lossGap(c.quality_before, c.quality_after, o, true);
    const SharedText gapHold = lossGap(c.quality_before, c.quality_after, o, false);
    for (bool hold : {false, true}) {
        const Log2Hist hb = allOf(pb, hold), ha = allOf(pa, hold);
        if (hb.empty() && ha.empty())
            continue;
        for (const auto& def : lockFigures()) {
            if (def.hold != hold || def.per_op || std::string(def.name) == (hold ? "p99 hold" : ""))
                continue;
            auto values = [&](const Runs& runs) {
                RunValues v;
                for (const Capture* r : runs) {
                    const Log2Hist all = allOf(*r, hold);
                    const auto x = def.f(RunPoint{&all, *r, 0.0});
                    if (!x)
                        continue;
                    v.values.push_back(*x);
                    if (def.countedEvents()) {
                        v.events.push_back(double(all.count()));
                        v.exposure.push_back(r->meta.duration_s > 0.0 ? r->meta.duration_s : 1.0);
                    }
                }
                return v;
            };
            FigureRuns f
                = runMetric(def.name, def.unit, values(base), values(patched), false, def.kind, def.directed);
            MetricDelta& m = f.figure;
            if (std::max(hb.count(), ha.count()) < o.min_events)
                m.judgement = insufficient(m.name, o);
            else if (c.varianceKnown())
                m.judgement = judgeFigure(f, o);
            else
                m.judgement = judgeEvents(m, TestKind::EventHistograms,
                                          testHistograms(hb, pb.meta.duration_s, ha, pa.meta.duration_s,
                                                         effectPct(m.value), o.alpha, o.min_effect_pct),
                                          o);
            withhold(m.judgement, hold ? gapHold : gapWait);
            c.headline.push_back(std::move(m));
        }
    }
    if (pb.cpu.samples || pa.cpu.samples)
        c.headline.push_back(shareMetric(
            "cpu_lock_share", base, patched, [](const Capture& r) { return r.cpu.lock_samples; }, true, c, o));
    // The observer's own cost: more or less of it is neither better nor worse. Compared only where
    // every run counted it (the pool's count is then set): an uncounted run is not a run of 0.
    const std::optional<uint64_t>& bb = pb.cpu.bpf_samples;
    const std::optional<uint64_t>& ba = pa.cpu.bpf_samples;
    if (bb && ba && (*bb || *ba))
        c.headline.push_back(shareMetric(
            "cpu_bpf_share", base, patched, [](const Capture& r) { return *r.cpu.bpf_samples; }, false, c, o));
    else if (bb.has_value() != ba.has_value() && bb.value_or(0) + ba.value_or(0))
        c.notes.push_back(std::string(fmt::kCpuBpfLabel) + " not compared: the " + (bb ? "after" : "before") +
                          " captures do not count it (written before lockscope counted it, or imported)");
}

// CPU share of the hottest leaves (the perf-top figure), the top 10.
void cpuLeafMetrics(Comparison& c, const Runs& base, const Runs& patched, const Capture& pb, const Capture& pa,
                    const CompareOptions& o)
{
    std::map<std::string, uint64_t> leaves;
    for (const auto& l : pb.cpu.top_leaves)
        leaves[l.function] += l.samples;
    for (const auto& l : pa.cpu.top_leaves)
        leaves[l.function] += l.samples;
    for (const auto& [fn, unusedSamples] : leaves) {
        const bool lockFn = isLockFunction(fn) || isSpinFunction(fn);
        auto part = [fn = fn](const Capture& r) {
            uint64_t n = 0;
            for (const auto& l : r.cpu.top_leaves)
                if (l.function == fn)
                    n += l.samples;
            return n;
        };
        // More CPU in ordinary work is not worse; only lock functions get a direction.
        c.cpu_leaves.push_back(shareMetric(fn, base, patched, part, lockFn, c, o));
    }
    std::stable_sort(c.cpu_leaves.begin(), c.cpu_leaves.end(), [](const MetricDelta& x, const MetricDelta& y) {
        return std::max(x.value.before, x.value.after) > std::max(y.value.before, y.value.after);
    });
    if (c.cpu_leaves.size() > 10)
        c.cpu_leaves.resize(10);
}

// The rows' totals of the pooled comparison become per-run means (n = 1:
// unchanged); the tree's once it is made (below).
void perRunMeans(Comparison& c)
{
    const double nb = double(c.runs_before), na = double(c.runs_after);
    if (nb == 1.0 && na == 1.0)
        return;
    auto scale = [&](Delta& d) {
        d.before /= nb;
        d.after /= na;
    };
    for (LockDelta& l : c.locks) {
        for (Delta* d : {&l.contentions, &l.total_wait_ns, &l.hold_count, &l.total_hold_ns})
            scale(*d);
        for (PathDelta& p : l.paths)
            for (Delta* d : {&p.wait_ns, &p.hold_ns, &p.count})
                scale(*d);
    }
    for (PathDelta& p : c.paths)
        for (Delta* d : {&p.wait_ns, &p.hold_ns, &p.count})
            scale(*d);
    for (auto* rows : {&c.syscalls, &c.functions})
        for (LatencyDelta& l : *rows) {
            scale(l.calls);
            scale(l.errors);
        }
}

// The tree's totals as per-run means, as perRunMeans makes the rows'.
void perRunMeans(DiffTree& tree, size_t runsBefore, size_t runsAfter)
{
    const double nb = double(runsBefore), na = double(runsAfter);
    if (nb == 1.0 && na == 1.0)
        return;
    for (DiffNode& n : tree.nodes) {
        for (uint64_t* v : {&n.before_wait_ns, &n.before_hold_ns, &n.before_count})
            *v = uint64_t(std::llround(double(*v) / nb));
        for (uint64_t* v : {&n.after_wait_ns, &n.after_hold_ns, &n.after_count})
            *v = uint64_t(std::llround(double(*v) / na));
    }
}

// Sorted through their keys: a LockDelta is ~4 KB of histograms, and
// sorting 10k of them moved half a GB; each key is worked out once.
void sortLocks(std::vector<LockDelta>& locks, CompareSort key)
{
    auto maxOf = [](const Delta& d) { return std::max(d.before, d.after); };
    auto change = [](const LockDelta& l) {
        const MetricDelta* m = judgedMetric(l);
        return m ? std::fabs(effectPct(m->value)) : 0.0;
    };
    struct Keys {
        double first, second;
        size_t index;
    };
    std::vector<Keys> keys;
    keys.reserve(locks.size());
    for (size_t i = 0; i < locks.size(); ++i) {
        const LockDelta& l = locks[i];
        switch (key) {
        case CompareSort::Wait: keys.push_back({maxOf(l.total_wait_ns), maxOf(l.total_hold_ns), i}); break;
        case CompareSort::Hold: keys.push_back({maxOf(l.total_hold_ns), maxOf(l.total_wait_ns), i}); break;
        case CompareSort::Change:
            keys.push_back({change(l), maxOf(l.total_wait_ns) + maxOf(l.total_hold_ns), i});
            break;
        }
    }
    std::stable_sort(keys.begin(), keys.end(), [&](const Keys& x, const Keys& y) {
        if (x.first != y.first)
            return x.first > y.first;
        return x.second != y.second ? x.second > y.second : locks[x.index].key < locks[y.index].key;
    });
    // The order applied in place, cycle by cycle: a sorted copy was 40 MB of
    // fresh memory on a 10k-lock comparison, dear under a hypervisor.
    // keys[i].index is where row i comes from; a row in place points to itself.
    for (size_t start = 0; start < keys.size(); ++start) {
        if (keys[start].index == start)
            continue;
        LockDelta held = std::move(locks[start]);
        size_t to = start;
        while (keys[to].index != start) {
            locks[to] = std::move(locks[keys[to].index]);
            to = std::exchange(keys[to].index, to);
        }
        locks[to] = std::move(held);
        keys[to].index = to;
    }
}
} // namespace

double DataQuality::lostPct() const noexcept
{
    return events + lost ? 100.0 * double(lost) / double(events + lost) : 0.0;
}
double DataQuality::stackFailurePct() const noexcept
{
    // An owner's stack is a second walk of one wait: failures can outnumber the events.
    const uint64_t walked = std::max(lock_events, stack_failures);
    return walked ? 100.0 * double(stack_failures) / double(walked) : 0.0;
}
double DataQuality::untimedPct() const noexcept
{
    return waits ? 100.0 * double(waits_untimed) / double(waits) : 0.0;
}

const MetricDelta* judgedMetric(const LockDelta& lock)
{
    return lockFigure(lock, lock.judgement.basis);
}

const MetricDelta* lockFigure(const LockDelta& lock, const std::string& figure)
{
    for (const auto& m : lock.runs)
        if (m.name == figure)
            return &m;
    return nullptr;
}

std::vector<const MetricDelta*> otherChangedFigures(const LockDelta& lock)
{
    std::vector<const MetricDelta*> out;
    for (const auto& m : lock.runs)
        if (m.name != lock.judgement.basis && m.judgement.decided() && m.kind != FigureKind::TimePerEvent)
            out.push_back(&m);
    return out;
}

std::string varianceNote(const Comparison& c)
{
    const std::string n = "n = " + std::to_string(c.runs_before) + " run" + (c.runs_before == 1 ? "" : "s") +
                          " before, " + std::to_string(c.runs_after) + " after";
    if (c.varianceKnown()) {
        const CompareOptions& o = c.options;
        char b[768];
        std::snprintf(b, sizeof b,
                      "; a verdict needs p < %g across runs (Welch's t on per-run values; a quasi-Poisson rate test "
                      "on per-run counts for event rates and for figures absent from every run of one side), "
                      "separated ranges, a change of at least %g%% (%g pp for percentages) and the absolute floor: "
                      "%g%% of one CPU (%s) for time per second, %g events/s, %s per operation or event, %g "
                      "events per operation (--floor-cpu, --floor-rate, --floor-ns, --floor-per-op)",
                      o.alpha, o.min_effect_pct, o.min_effect_pp, o.floor_cpu_pct,
                      (fmt::duration(o.floor_cpu_pct / 100.0 * 1e9) + "/s").c_str(), o.floor_events_per_s,
                      fmt::duration(o.floor_ns).c_str(), o.floor_events_per_op);
        std::string note = n + b + ".";
        if (c.oneRunAgainstRuns())
            note += " The side of one run is judged against the other side's runs: their spread stands for both "
                    "(Student's t on the prediction interval, n - 1 df; a quasi-Poisson rate test for counts), so a "
                    "patch that makes runs vary more reads as a change, and so does one unusual run: confirm a "
                    "change on one run with more runs.";
        if (c.per_op_leads)
            note += " Operations per second differ by " + fmt::pct(c.ops_per_s) + " (" +
                    fmt::significant(o.min_effect_pct, 6) +
                    "% or more, a significant change or not), so each lock is judged per operation (wait and hold "
                    "time/op).";
        return note;
    }
    return n + ": run-to-run variance is unknown, so no figure gets a verdict. The p-values are event tests', "
               "which treat every event as independent: two runs of one kernel differ by more than they allow. "
               "Record two or more runs a side (compare A1 A2 A3 -- B1 B2 B3, lab --runs 3), or three or more "
               "against one, for verdicts.";
}

Comparison compareSets(const std::vector<const Capture*>& base, const std::vector<const Capture*>& patched,
                       const CompareOptions& o)
{
    detail::requireBothSides(base.size(), patched.size());
    detail::LockAligner aligner;
    std::deque<Capture> renamed; // copies of the runs whose lock keys the aligner changes
    auto aligned = [&](std::vector<const Capture*> runs, detail::RunSide side) {
        for (const Capture*& run : runs) {
            const detail::RunCallers callers = detail::walkedCallers(*run);
            if (aligner.renames(*run).empty()) {
                aligner.learn(*run, callers);
            } else {
                run = &renamed.emplace_back(*run);
                aligner.align(renamed.back(), callers, side);
            }
        }
        return runs;
    };
    const auto b = aligned(base, detail::RunSide::Before), a = aligned(patched, detail::RunSide::After);
    aligner.forgetRuns();
    const auto poolB = detail::poolRuns(b), poolA = detail::poolRuns(a);
    Comparison c = detail::comparePools(detail::pooledSide(poolB, b), b, detail::pooledSide(poolA, a), a, o);
    aligner.annotate(c);
    return c;
}

void detail::requireBothSides(size_t base, size_t patched)
{
    if (base == 0 || patched == 0)
        throw std::invalid_argument("compare needs at least one capture on each side");
}

Comparison detail::comparePools(const PooledSide& sb, const std::vector<const Capture*>& base, const PooledSide& sa,
                                const std::vector<const Capture*>& patched, const CompareOptions& o)
{
    const Capture& pb = sb.capture;
    const Capture& pa = sa.capture;
    detail::PooledComparison pooled = detail::comparePooled(sb, sa, o);
    Comparison c = std::move(pooled.rows);
    c.before.meta = base.front()->meta;
    c.after.meta = patched.front()->meta;
    c.runs_before = base.size();
    c.runs_after = patched.size();
    c.quality_before = detail::dataQuality(base);
    c.quality_after = detail::dataQuality(patched);
    c.warnings = detail::setWarnings(base, patched, c.quality_before, c.quality_after);
    c.notes = detail::setNotes(base, patched, c.quality_before, c.quality_after);
    perRunMeans(c);
    throughput(c, base, patched, o);
    workloadMetrics(c, base, patched, o);
    headlineMetrics(c, base, patched, pb, pa, o);
    cpuLeafMetrics(c, base, patched, pb, pa, o);
    judgeLocks(c, base, patched, o);
    judgeLatency(c.syscalls, base, patched, false, c, o);
    judgeLatency(c.functions, base, patched, true, c, o);
    sortLocks(c.locks, o.sort);
    c.tree = pooled.tree.get();
    perRunMeans(c.tree, c.runs_before, c.runs_after);
    return c;
}

Comparison compareSets(const std::vector<Capture>& base, const std::vector<Capture>& patched,
                       const CompareOptions& o)
{
    std::vector<const Capture*> b, a;
    for (const auto& x : base)
        b.push_back(&x);
    for (const auto& x : patched)
        a.push_back(&x);
    return compareSets(b, a, o);
}

Comparison compare(const Capture& before, const Capture& after, const CompareOptions& o)
{
    return compareSets(std::vector<const Capture*>{&before}, std::vector<const Capture*>{&after}, o);
}

} // namespace lockscope::reports
