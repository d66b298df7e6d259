// SPDX-License-Identifier: GPL-2.0-or-later
#include <algorithm>
#include <cmath>
#include <string>

#include "compare_internal.h"
#include "lockscope/reports/compare.h"

// The one decision on a figure between two run sets (compare.h: judgeFigure).
// Every run-set row of a comparison, and lab bisect's judge, ask it.
namespace lockscope::reports {

using detail::effectPct;

const char* toString(FigureKind k) noexcept
{
    switch (k) {
    case FigureKind::Other: return "other";
    case FigureKind::TimePerSecond: return "time per second";
    case FigureKind::EventsPerSecond: return "events per second";
    case FigureKind::TimePerEvent: return "time per event";
    case FigureKind::TimePerOp: return "time per operation";
    case FigureKind::EventsPerOp: return "events per operation";
    }
    return "?";
}

double figureFloor(const MetricDelta& m, const CompareOptions& o)
{
    switch (m.kind) {
    case FigureKind::TimePerSecond: return o.floor_cpu_pct / 100.0 * 1e9;  // ns of lock time per second
    case FigureKind::EventsPerSecond: return o.floor_events_per_s;
    case FigureKind::TimePerEvent:
    case FigureKind::TimePerOp: return o.floor_ns;
    case FigureKind::EventsPerOp: return o.floor_events_per_op * (m.unit == "/1k ops" ? 1000.0 : 1.0);
    case FigureKind::Other: return 0.0;
    }
    return 0.0;
}

namespace {

bool allZero(const RunSummary& s)
{
    return s.n && s.min == 0.0 && s.max == 0.0;
}

bool counted(const RunValues& v)
{
    return !v.events.empty() && v.events.size() == v.values.size() && v.exposure.size() == v.values.size();
}

double meanOf(const std::vector<double>& v)
{
    double s = 0.0;
    for (double x : v)
        s += x;
    return v.empty() ? 0.0 : s / double(v.size());
}

// The evidence on one figure: the test that fits its data, its p-value and
// the per-run variance of each side under that test (for the power estimate).
struct Evidence {
    TestKind test = TestKind::WelchRuns;
    double p = 1.0;
    double var_before = 0.0, var_after = 0.0;
};

Evidence evidence(const FigureRuns& f)
{
    const MetricDelta& m = f.figure;
    const RunSummary &b = m.before_runs, &a = m.after_runs;
    const bool counts = counted(f.before) && counted(f.after);
    const bool eventFigure = m.kind == FigureKind::EventsPerSecond || m.kind == FigureKind::EventsPerOp;
    // Zero in every run of one side: Welch's t would rest on one side's variance alone.
    const bool absentOnOneSide = allZero(b) != allZero(a);
    Evidence e;
    if (counts && (eventFigure || absentOnOneSide)) {
        const RunValues &vb = f.before, &va = f.after;
        const RateTest r = quasiPoissonRateTest(vb.events, vb.exposure, va.events, va.exposure);
        e.test = TestKind::QuasiPoissonRuns;
        e.p = r.p_value;
        // One run's variance of the figure under the fitted dispersion, in the figure's unit.
        const double rates = r.rate_before + r.rate_after;
        const double scale = rates > 0.0 ? (b.mean + a.mean) / rates : 0.0;
        const double eb = meanOf(vb.exposure), ea = meanOf(va.exposure);
        e.var_before = eb > 0.0 ? r.dispersion * r.rate_before / eb * scale * scale : 0.0;
        e.var_after = ea > 0.0 ? r.dispersion * r.rate_after / ea * scale * scale : 0.0;
        return e;
    }
    const RunTest t = m.runs_test ? *m.runs_test : runsTest(b, a);
    e.test = b.n >= 2 && a.n >= 2 ? TestKind::WelchRuns : TestKind::OneRunAgainstRuns;
    e.p = t.p_value;
    e.var_before = b.stddev * b.stddev;
    e.var_after = a.stddev * a.stddev;
    // A single run has no spread of its own: the other side's stands for it (singleRunTest).
    if (b.n == 1)
        e.var_before = e.var_after;
    if (a.n == 1)
        e.var_after = e.var_before;
    return e;
}

bool bigEnough(const MetricDelta& m, const CompareOptions& o)
{
    if (m.isPercent())
        return std::fabs(m.value.delta()) >= o.min_effect_pp;
    return std::fabs(effectPct(m.value)) >= o.min_effect_pct;
}
} // namespace

Judgement judgeFigure(const FigureRuns& f, const CompareOptions& o)
{
    const MetricDelta& m = f.figure;
    Judgement j;
    j.basis = m.name;
    const RunSummary &b = m.before_runs, &a = m.after_runs;
    if (!runsCanDecide(b.n, a.n)) {
        // Made once and shared by every figure they are the reason of (shared_text.h), as below.
        static const SharedText kOneRunReason(detail::kOneRun);
        static const SharedText kAgainstTwo(std::string(detail::kOneRun)
            + ": against two runs a test rests on one degree of freedom (three or more decide)");
        j.verdict = Verdict::NoVerdict;
        j.reason = std::max(b.n, a.n) == 2 ? kAgainstTwo : kOneRunReason;
        return j;
    }
    if ((b.n == 1 && allZero(a) && !allZero(b)) || (a.n == 1 && allZero(b) && !allZero(a))) {
        // Nothing on the other side says how much the figure varies: one run cannot tell a lock or
        // leaf that comes and goes between runs from a new one.
        static const SharedText kComesAndGoes(
            "seen in the one run only, in no run of the other side: one run "
            "cannot tell what comes and goes between runs from a change");
        j.verdict = Verdict::NoVerdict;
        j.reason = kComesAndGoes;
        return j;
    }
    const double delta = a.mean - b.mean;
    if (m.kind == FigureKind::Other && b.stddev == 0.0 && a.stddev == 0.0 && delta != 0.0) {
        // The same value in every run of a side is a setting (threads, semaphores), not a measurement.
        j.test = TestKind::WelchRuns;
        j.p_value = 0.0;
        static const SharedText kSetting("constant within each side: a setting, not a measurement");
        j.verdict = Verdict::NoVerdict;
        j.reason = kSetting;
        return j;
    }
    const Evidence e = evidence(f);
    j.test = e.test;
    j.p_value = e.p;
    const bool separate = b.max < a.min || a.max < b.min;
    const bool passed = e.p < o.alpha && separate;
    const bool big = bigEnough(m, o);
    const bool overFloor = std::fabs(delta) >= figureFloor(m, o);
    j.below_effect_floor = passed && !big;
    j.below_floor = passed && big && !overFloor;
    if (passed && big && overFloor && delta != 0.0) {
        if (m.directed) {
            j.verdict = (delta > 0.0) == m.higher_is_better ? Verdict::Improved : Verdict::Regressed;
        } else {
            static const SharedText kUndirected(
                "changed beyond noise; no better/worse direction is known for this figure");
            j.verdict = Verdict::NoVerdict;
            j.reason = kUndirected;
        }
        return j;
    }
    const double change = m.isPercent() ? std::fabs(delta) / std::max(1e-300, std::fabs(b.mean)) * 100.0
                                        : std::fabs(effectPct(m.value));
    if (!passed && change >= kLargeChangePct && overFloor) {
        const size_t n = runsToDecide(e.var_before, e.var_after, delta, o.alpha);
        if (n > std::max(b.n, a.n))
            j.runs_to_decide = n;
    }
    return j;
}

} // namespace lockscope::reports
