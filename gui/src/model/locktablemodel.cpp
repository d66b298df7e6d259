// SPDX-License-Identifier: GPL-2.0-or-later
#include "model/locktablemodel.h"

#include "lockscope/capture/tail_basis.h"

#include "model/columnheader.h"
#include "model/roles.h"
#include "model/units.h"

namespace lockscope::gui {

LockTableModel::LockTableModel(QObject* parent) : QAbstractTableModel(parent) {}

void LockTableModel::setCapture(std::shared_ptr<const Capture> capture)
{
    beginResetModel();
    capture_ = std::move(capture);
    totalWait_ = 0;
    figures_.clear();
    if (capture_) {
        figures_.reserve(capture_->locks.size());
        for (const auto& lock : capture_->locks) {
            totalWait_ = saturatingAdd(totalWait_, lock.wait.total());
            figures_.push_back(reports::lockFigures(lock, &capture_->meta));
        }
    }
    endResetModel();
}

int LockTableModel::rowCount(const QModelIndex& parent) const
{
    if (parent.isValid() || !capture_)
        return 0;
    return static_cast<int>(capture_->locks.size());
}

int LockTableModel::columnCount(const QModelIndex& parent) const
{
    return parent.isValid() ? 0 : ColumnCount;
}

QVariant LockTableModel::data(const QModelIndex& index, int role) const
{
    if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid))
        return {};
    const Lock& lock = capture_->locks[static_cast<size_t>(index.row())];
    const reports::LockFigures& figures = figures_[static_cast<size_t>(index.row())];
    const double waitShare =
        totalWait_ ? static_cast<double>(lock.wait.total()) / static_cast<double>(totalWait_) : 0.0;

    if (role == LockIndexRole)
        return index.row();
    if (role == Qt::TextAlignmentRole)
        return index.column() <= Type ? QVariant() : QVariant(Qt::AlignRight | Qt::AlignVCenter);
    if (role == FractionRole)
        return index.column() == WaitTotal || index.column() == WaitShare ? QVariant(waitShare) : QVariant();
    if (role == Qt::ToolTipRole && index.column() == Key) {
        QString tip = fromStd(lock.key) + QStringLiteral(" (") + fromStd(lock.type) + QLatin1Char(')');
        if (!lock.name.empty())
            tip += QStringLiteral("\nname ") + fromStd(lock.name);
        if (!lock.cgroup.empty())
            tip += QStringLiteral("\ncgroup ") + fromStd(lock.cgroup);
        if (lock.address)
            tip += QStringLiteral("\naddress 0x") + QString::number(*lock.address, 16);
        if (lock.aborted)
            tip += QStringLiteral("\n%1 waits aborted").arg(lock.aborted);
        return plainToolTip(tip);
    }
    if (role == Qt::ToolTipRole && (index.column() == WaitP99 || index.column() == WaitMax)) {
        const uint64_t exactNs = exactWaitNs(capture_->meta);
        const TailBasis& b = index.column() == WaitP99 ? figures.p99_wait_basis : figures.max_wait_basis;
        QString tip = b.exact ? QStringLiteral("Exact") : QStringLiteral("Estimated: ") + fromStd(b.text())
                + QStringLiteral(" waits (timing budget); the others were given their times");
        if (exactNs)
            tip += QStringLiteral("\nEvery wait of at least ") + formatNs(exactNs) + QStringLiteral(" was timed");
        return plainToolTip(tip);
    }
    if (role != Qt::DisplayRole && role != SortRole)
        return {};

    const bool display = role == Qt::DisplayRole;
    auto count = [display](uint64_t v) -> QVariant {
        return display ? QVariant(formatCount(v)) : QVariant(qulonglong(v));
    };
    // The lock figures' cells and sort keys, as the reports' tables have them (reports/lock_columns.h).
    auto shared = [&, display](reports::LockColumn c) -> QVariant {
        const reports::LockColumnSpec& spec = reports::lockColumn(c);
        return display ? QVariant(fromStd(spec.cell(figures, reports::fmt::kDisplay)))
                       : QVariant(qulonglong(spec.value(figures)));
    };
    switch (index.column()) {
    case Key: // the name (record --lock-names) beside the key; the cgroup is in the key
        return fromStd(display ? reports::fmt::lockLabel(lock.key, lock.name, reports::fmt::kDisplay) : lock.key);
    case Type:
        return fromStd(lock.type);
    case Instances:
        return count(lock.instances);
    case Contentions:
        return shared(reports::LockColumn::Contended);
    case WaitTotal:
        return shared(reports::LockColumn::TotalWait);
    case WaitAvg:
        return shared(reports::LockColumn::AvgWait);
    case WaitP99: // "~": estimated from the timed waits (tooltip)
        return shared(reports::LockColumn::P99Wait);
    case WaitMax:
        return shared(reports::LockColumn::MaxWait);
    case WaitShare:
        return display ? QVariant(formatPercent(waitShare)) : QVariant(waitShare);
    case HoldCount:
        return shared(reports::LockColumn::Holds);
    case HoldTotal: // "–" for a lock never held, as for the hold avg and max
        return shared(reports::LockColumn::TotalHold);
    case HoldAvg:
        return shared(reports::LockColumn::AvgHold);
    case HoldMax:
        return shared(reports::LockColumn::MaxHold);
    case AcquireCount:
        return shared(reports::LockColumn::Acquires);
    case AcquireP99: // "–" without slow acquisitions
        return shared(reports::LockColumn::P99Acquire);
    case Sites:
        return count(lock.sites.size());
    default:
        return {};
    }
}

QVariant LockTableModel::headerData(int section, Qt::Orientation orientation, int role) const
{
    static const char* const names[ColumnCount] = {
        "Lock", "Type", "Instances", "Contentions", "Wait total", "Wait avg", "Wait p99", "Wait max",
        "Wait %", "Holds", "Hold total", "Hold avg", "Hold max", "Slow acquires", "Acquire p99", "Call sites"};
    static const char* const tips[ColumnCount] = {
        "Lock symbol, or <type>@<acquiring function> when the address is not a global symbol",
        "Lock type as reported by the contention tracepoint or hold probe",
        "Distinct lock addresses folded into this key",
        "Contended acquisitions (waits) seen",
        "Sum of all wait times",
        "Mean wait time",
        "99th percentile of wait time (estimated from the log2 histogram, within 2x)",
        "Longest single wait",
        "Share of the capture's total wait time",
        "Acquisitions whose hold time was measured",
        "Sum of all hold times",
        "Mean hold time",
        "Longest single hold",
        "Spin-lock calls that took at least the hold probe's threshold to return (record --hold): the spin the "
        "contention tracepoint may not report",
        "99th percentile of those calls' time (estimated from the log2 histogram, within 2x)",
        "Distinct call stacks that contended or held the lock"};
    return columnHeader(names, tips, section, orientation, role);
}

} // namespace lockscope::gui
