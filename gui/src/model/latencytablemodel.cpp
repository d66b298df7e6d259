// SPDX-License-Identifier: GPL-2.0-or-later
#include "model/latencytablemodel.h"

#include "model/columnheader.h"
#include "model/latencyrows.h"
#include "model/roles.h"
#include "model/units.h"

namespace lockscope::gui {

LatencyTableModel::LatencyTableModel(QObject* parent) : QAbstractTableModel(parent) {}

void LatencyTableModel::setCapture(std::shared_ptr<const Capture> capture)
{
    beginResetModel();
    capture_ = std::move(capture);
    endResetModel();
}

const LatencyEntry* LatencyTableModel::entry(int row) const noexcept
{
    return capture_ ? latencyRow(capture_->syscalls, capture_->functions, row) : nullptr;
}

bool LatencyTableModel::isSyscall(int row) const noexcept
{
    return capture_ && row >= 0 && static_cast<size_t>(row) < capture_->syscalls.size();
}

int LatencyTableModel::rowCount(const QModelIndex& parent) const
{
    if (parent.isValid() || !capture_)
        return 0;
    return static_cast<int>(capture_->syscalls.size() + capture_->functions.size());
}

int LatencyTableModel::columnCount(const QModelIndex& parent) const
{
    return parent.isValid() ? 0 : ColumnCount;
}

QString LatencyTableModel::callsText(const LatencyEntry& e)
{
    QString text = formatCount(e.calls());
    if (e.sample_period > 1)
        text += QStringLiteral(" (1 in %1 timed)").arg(e.sample_period);
    return text;
}

QVariant LatencyTableModel::data(const QModelIndex& index, int role) const
{
    if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid))
        return {};
    const LatencyEntry& e = *entry(index.row());
    const int col = index.column();
    if (role == EntryIndexRole)
        return index.row();
    if (role == Qt::TextAlignmentRole)
        return col <= Name ? QVariant() : QVariant(Qt::AlignRight | Qt::AlignVCenter);
    if (role == Qt::ToolTipRole) {
        if (col == Calls && e.sample_period > 1)
            return e.all_calls
                       ? tr("%1 calls counted exactly; 1 in %2 per thread timed (%3 timed): latency and errors "
                            "are of the timed calls")
                             .arg(formatCount(e.all_calls))
                             .arg(e.sample_period)
                             .arg(formatCount(e.latency.count()))
                       : tr("Estimated as %1 timed calls × %2 (calls were not counted)")
                             .arg(formatCount(e.latency.count()))
                             .arg(e.sample_period);
        return {};
    }
    if (role != Qt::DisplayRole && role != SortRole)
        return {};
    const bool display = role == Qt::DisplayRole;
    auto ns = [display](uint64_t v) -> QVariant { return display ? QVariant(formatNs(v)) : QVariant(qulonglong(v)); };
    switch (col) {
    case Kind:
        return isSyscall(index.row()) ? QStringLiteral("syscall") : QStringLiteral("function");
    case Name:
        return fromStd(e.name);
    case Calls:
        return display ? QVariant(callsText(e)) : QVariant(qulonglong(e.calls()));
    case Errors:
        return display ? QVariant(formatCount(e.errors)) : QVariant(qulonglong(e.errors));
    case Mean:
        return ns(e.latency.mean());
    case P50:
        return ns(e.latency.percentile(50.0));
    case P99:
        return ns(e.latency.percentile(99.0));
    case Max:
        return ns(e.latency.max());
    default:
        return {};
    }
}

QVariant LatencyTableModel::headerData(int section, Qt::Orientation orientation, int role) const
{
    static const char* const names[ColumnCount] = {"Kind", "Name", "Calls", "Errors", "Mean", "p50", "p99", "Max"};
    static const char* const tips[ColumnCount] = {
        "syscall: timed from entry to exit of the system call; function: a kernel function's own latency",
        "System call or kernel function",
        "All calls in the capture; when only 1 in N calls per thread was timed, the exact count if the "
        "probe counted every call, else the timed calls × N",
        "Timed calls that returned an error",
        "Mean latency of the timed calls",
        "Median latency (estimated from the log2 histogram, within 2x)",
        "99th percentile latency (estimated from the log2 histogram, within 2x)",
        "Longest timed call"};
    return columnHeader(names, tips, section, orientation, role);
}

} // namespace lockscope::gui
