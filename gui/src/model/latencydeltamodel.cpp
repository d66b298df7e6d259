// SPDX-License-Identifier: GPL-2.0-or-later
#include "model/latencydeltamodel.h"

#include <algorithm>

#include <QColor>

#include "lockscope/reports/format.h"

#include "model/columnheader.h"
#include "model/deltatablemodel.h"
#include "model/latencyrows.h"
#include "model/roles.h"
#include "model/units.h"

namespace lockscope::gui {

using reports::LatencyDelta;
using reports::Presence;

LatencyDeltaModel::LatencyDeltaModel(QObject* parent) : QAbstractTableModel(parent) {}

void LatencyDeltaModel::setComparison(std::shared_ptr<const reports::Comparison> comparison)
{
    beginResetModel();
    comparison_ = std::move(comparison);
    endResetModel();
}

const LatencyDelta* LatencyDeltaModel::row(int row) const noexcept
{
    return comparison_ ? latencyRow(comparison_->syscalls, comparison_->functions, row) : nullptr;
}

bool LatencyDeltaModel::isSyscall(int row) const noexcept
{
    return comparison_ && row >= 0 && static_cast<size_t>(row) < comparison_->syscalls.size();
}

std::optional<double> LatencyDeltaModel::meanRatio(const LatencyDelta& d)
{
    if (d.presence != Presence::Both || d.before.empty() || d.after.empty() || d.avg_ns.before <= 0.0)
        return std::nullopt;
    return d.avg_ns.after / d.avg_ns.before;
}

int LatencyDeltaModel::rowCount(const QModelIndex& parent) const
{
    if (parent.isValid() || !comparison_)
        return 0;
    return static_cast<int>(comparison_->syscalls.size() + comparison_->functions.size());
}

int LatencyDeltaModel::columnCount(const QModelIndex& parent) const
{
    return parent.isValid() ? 0 : ColumnCount;
}

QVariant LatencyDeltaModel::data(const QModelIndex& index, int role) const
{
    if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid))
        return {};
    const LatencyDelta& d = *row(index.row());
    const int col = index.column();
    if (role == EntryIndexRole)
        return index.row();
    if (role == Qt::BackgroundRole) {
        const QColor tint = DeltaTableModel::verdictTint(d.avg_runs.judgement.verdict);
        return tint.isValid() ? QVariant(tint) : QVariant();
    }
    if (role == Qt::TextAlignmentRole)
        return col <= Outcome ? QVariant() : QVariant(Qt::AlignRight | Qt::AlignVCenter);
    if (role == Qt::ToolTipRole && (col == Outcome || col == MeanRatio))
        // The verdict's own test, then the shape test on the pooled calls as supporting evidence.
        return judgementText(d.avg_runs.judgement) +
               QStringLiteral("\nsupporting: χ² on the pooled latency distributions p = %1, %2 dof")
                   .arg(formatP(d.test.p_value))
                   .arg(d.test.dof);
    if (role != Qt::DisplayRole && role != SortRole)
        return {};
    const bool display = role == Qt::DisplayRole;
    // A side the entry is missing from shows "–" rather than a zero that reads like a measurement.
    const bool hasBefore = d.presence != Presence::OnlyAfter;
    const bool hasAfter = d.presence != Presence::OnlyBefore;
    auto ns = [display](bool present, double v) -> QVariant {
        if (!display)
            return present ? v : -1.0;
        return present ? QVariant(formatNs(static_cast<uint64_t>(std::max(0.0, v)))) : QVariant(QStringLiteral("–"));
    };
    auto count = [display](bool present, double v) -> QVariant {
        if (!display)
            return present ? v : -1.0;
        return present ? QVariant(formatCount(static_cast<uint64_t>(std::max(0.0, v))))
                       : QVariant(QStringLiteral("–"));
    };
    switch (col) {
    case Kind:
        return isSyscall(index.row()) ? QStringLiteral("syscall") : QStringLiteral("function");
    case Name:
        return QString::fromStdString(display ? d.name + d.sampledNote() : d.name);
    case Outcome:
        return display ? QVariant(DeltaTableModel::verdictLabel(d.avg_runs.judgement.verdict))
                       : QVariant(static_cast<int>(d.avg_runs.judgement.verdict));
    case CallsBefore:
        return count(hasBefore, d.calls.before);
    case MeanBefore:
        return ns(hasBefore, d.avg_ns.before);
    case P99Before:
        return ns(hasBefore, d.p99_ns.before);
    case CallsAfter:
        return count(hasAfter, d.calls.after);
    case MeanAfter:
        return ns(hasAfter, d.avg_ns.after);
    case P99After:
        return ns(hasAfter, d.p99_ns.after);
    case MeanRatio: {
        const auto r = meanRatio(d);
        if (!display)
            return r ? *r : -1.0;
        return r ? QStringLiteral("×") + fromStd(reports::fmt::fixed(*r, *r < 10.0 ? 2 : 1, reports::fmt::kDisplay))
                 : QStringLiteral("–");
    }
    default:
        return {};
    }
}

QVariant LatencyDeltaModel::headerData(int section, Qt::Orientation orientation, int role) const
{
    static const char* const names[ColumnCount] = {"Kind",   "Name",  "Verdict", "Calls A", "Mean A",
                                                   "p99 A",  "Calls B", "Mean B", "p99 B",  "Mean B/A"};
    static const char* const tips[ColumnCount] = {
        "syscall or kernel function",
        "Matched by name across the two captures",
        "The comparison engine's verdict on the mean latency (Welch's t across runs with two or more runs per side, "
        "t of one run on the other side's spread with three or more against one, else χ² on the pooled calls; the "
        "tooltip names the test): significant change either way, no "
        "significant change, too few calls, or an entry on one side only",
        "Calls in the baseline (A); estimated from the timed calls when only 1 in N was timed and not counted",
        "Mean latency in the baseline (A)",
        "99th percentile latency in the baseline (A), estimated from the log2 histogram",
        "Calls in the patched capture (B)",
        "Mean latency in the patched capture (B)",
        "99th percentile latency in the patched capture (B), estimated from the log2 histogram",
        "Mean B / mean A: below ×1.00 the patched kernel is faster; “–” when a side has no timed call"};
    return columnHeader(names, tips, section, orientation, role);
}

} // namespace lockscope::gui
