// SPDX-License-Identifier: GPL-2.0-or-later
#include "model/deltatablemodel.h"

#include <cmath>

#include <QColor>
#include <QStringList>

#include "lockscope/reports/change_order.h"
#include "lockscope/reports/format.h"
#include "model/columnheader.h"
#include "model/roles.h"
#include "model/units.h"

namespace lockscope::gui {

using reports::Delta;
using reports::LockDelta;


DeltaTableModel::DeltaTableModel(QObject* parent) : QAbstractTableModel(parent) {}

void DeltaTableModel::setComparison(std::shared_ptr<const reports::Comparison> comparison)
{
    beginResetModel();
    comparison_ = std::move(comparison);
    rank_.assign(comparison_ ? comparison_->locks.size() : 0, 0);
    if (comparison_) {
        const std::vector<size_t> order = reports::changedFirstOrder(*comparison_);
        for (size_t r = 0; r < order.size(); ++r)
            rank_[order[r]] = static_cast<int>(r);
    }
    endResetModel();
}

int DeltaTableModel::rowCount(const QModelIndex& parent) const
{
    if (parent.isValid() || !comparison_)
        return 0;
    return static_cast<int>(comparison_->locks.size());
}

int DeltaTableModel::columnCount(const QModelIndex& parent) const
{
    return parent.isValid() ? 0 : ColumnCount;
}

QString DeltaTableModel::verdictLabel(reports::Verdict v)
{
    switch (v) {
    case reports::Verdict::Improved:
        return QStringLiteral("less (better)");
    case reports::Verdict::Regressed:
        return QStringLiteral("more (worse)");
    case reports::Verdict::NoSignificantChange:
        return QStringLiteral("no significant change");
    case reports::Verdict::InsufficientData:
        return QStringLiteral("too few events");
    case reports::Verdict::OnlyBefore:
        return QStringLiteral("only before");
    case reports::Verdict::OnlyAfter:
        return QStringLiteral("only after");
    case reports::Verdict::Withheld:
        return QStringLiteral("withheld");
    case reports::Verdict::NoVerdict:
        return QStringLiteral("no verdict");
    }
    return {};
}

bool DeltaTableModel::columnHasData(int column) const
{
    if (!comparison_)
        return true;
    bool wait = false, hold = false;
    for (const auto& l : comparison_->locks) {
        wait = wait || l.has_wait;
        hold = hold || l.has_hold;
    }
    if (column >= ContentionsBefore && column <= MaxWaitPct)
        return wait;
    if (column >= HoldsBefore && column <= AvgHoldPct)
        return hold;
    return true;
}

QColor DeltaTableModel::verdictTint(reports::Verdict v)
{
    switch (v) {
    case reports::Verdict::Improved:
        return QColor(0xd4, 0xf4, 0xdc);
    case reports::Verdict::Regressed:
        return QColor(0xfb, 0xd5, 0xd5);
    case reports::Verdict::OnlyBefore:
        return QColor(0xdc, 0xe6, 0xfa);
    case reports::Verdict::OnlyAfter:
        return QColor(0xfc, 0xe8, 0xc8);
    default:
        return {};
    }
}

namespace {
QVariant pct(const Delta& d, bool display)
{
    const auto p = d.pct();
    if (!display)
        return p ? QVariant(*p) : QVariant(d.after > 0 ? 1e300 : 0.0);
    return fromStd(reports::fmt::pct(d, reports::fmt::kDisplay));
}

QVariant ns(double v, bool display)
{
    return display ? QVariant(formatNs(static_cast<uint64_t>(std::max(0.0, v)))) : QVariant(v);
}

QVariant signedNs(double v, bool display)
{
    if (!display)
        return v;
    return (v < 0 ? QStringLiteral("−") : QStringLiteral("+")) + formatNs(static_cast<uint64_t>(std::fabs(v)));
}

// Run sets show means per run: one wait in three runs is 0.33, not 0.
QVariant count(double v, bool display)
{
    if (!display)
        return v;
    v = std::max(0.0, v);
    if (v < 10.0 && v != std::floor(v))
        return QString::number(v, 'g', 2);
    return formatCount(static_cast<uint64_t>(std::llround(v)));
}

QString eventTestTip(const reports::Significance& s)
{
    return QStringLiteral("p = %1 (distribution shape p = %2, χ² = %3 with %4 dof; event rate p = %5)%6")
        .arg(formatP(s.p_value), formatP(s.shape_p), QString::number(s.chi_square, 'g', 4))
        .arg(s.dof)
        .arg(formatP(s.rate_p),
             s.significant ? QStringLiteral(" — significant") : QStringLiteral(" — not significant"));
}
QVariant figure(const reports::MetricDelta* m, bool after, bool display)
{
    if (!m)
        return display ? QVariant(QStringLiteral("–")) : QVariant(0.0);
    const double v = after ? m->value.after : m->value.before;
    if (!display)
        return v;
    const reports::RunSummary& r = after ? m->after_runs : m->before_runs;
    const QString text = formatFigure(v, m->unit);
    return r.n < 2 ? text : text + QStringLiteral(" ±%1 %").arg(QString::number(r.coeffVarPct(), 'f', 1));
}

// The verdict's own test and p-value, then the pooled event tests as supporting evidence.
QString verdictTip(const LockDelta& l)
{
    QString t = judgementText(l.judgement);
    if (l.presence == reports::Presence::Both) {
        if (l.has_wait)
            t += QStringLiteral("\nsupporting event test on waits: ") + eventTestTip(l.wait_test);
        if (l.has_hold)
            t += QStringLiteral("\nsupporting event test on holds: ") + eventTestTip(l.hold_test);
    }
    return t;
}
} // namespace

QVariant DeltaTableModel::data(const QModelIndex& index, int role) const
{
    if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid))
        return {};
    const LockDelta& l = comparison_->locks[static_cast<size_t>(index.row())];
    const int col = index.column();
    if (role == LockIndexRole)
        return index.row();
    if (role == Qt::BackgroundRole) {
        const QColor tint = verdictTint(l.judgement.verdict);
        return tint.isValid() ? QVariant(tint) : QVariant();
    }
    if (role == Qt::TextAlignmentRole)
        return col <= Outcome ? QVariant() : QVariant(Qt::AlignRight | Qt::AlignVCenter);
    if (role == Qt::ToolTipRole) {
        if (col == Outcome || col == PValue || col == Test || col == Change)
            return verdictTip(l);
        if (col == Key) {
            QString t = QString::fromStdString(l.key);
            for (const auto& other : l.also_keyed) // the same lock keyed by another of its callers in some runs
                t += QStringLiteral("\nalso keyed ") + QString::fromStdString(other);
            return plainToolTip(t);
        }
        if (col == OtherChanges) {
            QString t;
            for (const reports::MetricDelta* m : reports::otherChangedFigures(l))
                t += (t.isEmpty() ? QString() : QStringLiteral("\n")) + judgementText(m->judgement);
            return t.isEmpty() ? QVariant() : QVariant(t);
        }
        return {};
    }
    if (role != Qt::DisplayRole && role != SortRole)
        return {};
    const bool display = role == Qt::DisplayRole;
    const reports::MetricDelta* judged = reports::judgedMetric(l);
    switch (col) {
    case Key:
        return QString::fromStdString(l.key);
    case Type:
        return QString::fromStdString(l.type);
    case Outcome:
        // Sorted: the most severe verdict first, then the biggest change (change_order.h).
        return display ? QVariant(verdictLabel(l.judgement.verdict)) : QVariant(rank_[static_cast<size_t>(index.row())]);
    case Figure:
        return QString::fromStdString(l.judgement.basis);
    case Before:
        return figure(judged, false, display);
    case After:
        return figure(judged, true, display);
    case Change:
        return judged ? pct(judged->value, display) : QVariant(display ? QStringLiteral("–") : QVariant(0.0));
    case Test:
        return l.judgement.test == reports::TestKind::None ? QStringLiteral("–")
                                                            : QString::fromUtf8(reports::toString(l.judgement.test));
    case ContentionsBefore:
        return count(l.contentions.before, display);
    case ContentionsAfter:
        return count(l.contentions.after, display);
    case ContentionsPct:
        return pct(l.contentions, display);
    case WaitBefore:
        return ns(l.total_wait_ns.before, display);
    case WaitAfter:
        return ns(l.total_wait_ns.after, display);
    case WaitDelta:
        return signedNs(l.total_wait_ns.delta(), display);
    case WaitPct:
        return pct(l.total_wait_ns, display);
    case AvgWaitPct:
        return pct(l.avg_wait_ns, display);
    case P99WaitPct:
        return pct(l.p99_wait_ns, display);
    case MaxWaitPct:
        return pct(l.max_wait_ns, display);
    case HoldsBefore:
        return count(l.hold_count.before, display);
    case HoldsAfter:
        return count(l.hold_count.after, display);
    case HoldBefore:
        return ns(l.total_hold_ns.before, display);
    case HoldAfter:
        return ns(l.total_hold_ns.after, display);
    case HoldPct:
        return l.has_hold ? pct(l.total_hold_ns, display) : QVariant(display ? QStringLiteral("–") : QVariant(0.0));
    case AvgHoldPct:
        return l.has_hold ? pct(l.avg_hold_ns, display) : QVariant(display ? QStringLiteral("–") : QVariant(0.0));
    case OtherChanges: {
        QStringList parts;
        for (const reports::MetricDelta* m : reports::otherChangedFigures(l))
            parts << QStringLiteral("%1 %2: %3")
                         .arg(QString::fromStdString(m->name), pct(m->value, true).toString(),
                              verdictLabel(m->judgement.verdict));
        return display ? QVariant(parts.join(QStringLiteral("; "))) : QVariant(static_cast<int>(parts.size()));
    }
    case PValue:
        // The verdict's own test's p-value; none when no test ran (presence, too few events, one run).
        if (!l.judgement.p_value)
            return display ? QVariant(QStringLiteral("–")) : QVariant(2.0);
        return display ? QVariant(formatP(*l.judgement.p_value, 2)) : QVariant(*l.judgement.p_value);
    default:
        return {};
    }
}

QVariant DeltaTableModel::headerData(int section, Qt::Orientation orientation, int role) const
{
    static const char* const names[ColumnCount] = {
        "Lock", "Type", "Verdict", "Judged on", "A", "B", "Δ%", "Test", "p", "Contentions A", "Contentions B",
        "Contentions Δ%", "Wait A", "Wait B", "Wait Δ", "Wait Δ%", "Avg wait Δ%", "p99 wait Δ%", "Max wait Δ%",
        "Holds A", "Holds B", "Hold A", "Hold B", "Hold Δ%", "Avg hold Δ%", "Other changes"};
    static const char* const tips[ColumnCount] = {
        "Lock key, matched across the two kernel builds by symbol or <type>@<caller>, never by address",
        "Lock type (after's, else before's)",
        "The comparison engine's verdict on the judged figure (with runs, the strongest well-supported change among "
        "total wait/s and total hold/s, per operation when throughput changed): significant change in either "
        "direction, no significant change, withheld (the sides lost different shares of data), too few events, or a "
        "lock seen on one side only; with one run a side no verdict, only the event test's p; the tooltip names "
        "the test",
        "The figure the verdict is on: with runs the strongest change among wait and hold time (per second, or per "
        "operation when throughput changed); with one run total wait/s, or total hold/s without waits",
        "Mean of the judged figure over the baseline (A) runs, ± coefficient of variation with two or more runs",
        "Mean of the judged figure over the patched (B) runs, ± coefficient of variation with two or more runs",
        "(B − A) / A of the judged figure's means",
        "The test that produced the verdict: Welch's t across runs (one run against three or more: t of the run on "
        "the other side's spread), or the quasi-Poisson rate test over runs for "
        "event counts and figures absent from one side (with range separation, the effect floor and the absolute "
        "floor) with two or more runs per side, else the event tests on the pooled histograms (shown, never a "
        "verdict)",
        "The p-value of the test in the Test column (the verdict's own test); “–” when no test ran",
        "Contended acquisitions in the baseline (A)",
        "Contended acquisitions in the patched capture (B)",
        "(B − A) / A of the contention count; “new” when A had none",
        "Total wait time in the baseline (A)",
        "Total wait time in the patched capture (B)",
        "B − A of the total wait time (negative = less waiting)",
        "(B − A) / A of the total wait time",
        "(B − A) / A of the mean wait",
        "(B − A) / A of the 99th percentile wait (estimated from log2 histograms)",
        "(B − A) / A of the longest wait",
        "Holds in the baseline (A), per run",
        "Holds in the patched capture (B), per run",
        "Total hold time in the baseline (A), per run",
        "Total hold time in the patched capture (B), per run",
        "(B − A) / A of the total hold time, “–” without hold data",
        "(B − A) / A of the mean hold time, “–” without hold data",
        "The lock's other figures whose own verdict is a change (waits and holds are judged separately, per "
        "second and per operation); the Verdict column shows the strongest"};
    return columnHeader(names, tips, section, orientation, role);
}

} // namespace lockscope::gui
