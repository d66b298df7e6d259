// SPDX-License-Identifier: GPL-2.0-or-later
#include "model/holdermodel.h"

#include <algorithm>

#include "lockscope/capture/site_shares.h"
#include "model/columnheader.h"
#include "model/roles.h"
#include "model/units.h"

namespace lockscope::gui {

HolderTableModel::HolderTableModel(QObject* parent) : QAbstractTableModel(parent) {}

void HolderTableModel::setCapture(std::shared_ptr<const Capture> capture, int lockIndex)
{
    beginResetModel();
    capture_ = std::move(capture);
    rows_.clear();
    if (capture_) {
        const StackIndex index(*capture_);
        for (size_t i = 0; i < capture_->locks.size(); ++i) {
            if (lockIndex >= 0 && static_cast<size_t>(lockIndex) != i)
                continue;
            for (auto& h : reports::lockHolders(capture_->locks[i], index))
                rows_.push_back({static_cast<int>(i), std::move(h)});
        }
        std::stable_sort(rows_.begin(), rows_.end(),
                         [](const Row& a, const Row& b) { return a.holder.wait_ns > b.holder.wait_ns; });
    }
    endResetModel();
}

int HolderTableModel::rowCount(const QModelIndex& parent) const
{
    return parent.isValid() ? 0 : static_cast<int>(rows_.size());
}

int HolderTableModel::columnCount(const QModelIndex& parent) const
{
    return parent.isValid() ? 0 : ColumnCount;
}

namespace {
// Innermost first, as the reports print a path.
QString pathText(const std::vector<std::string>& outermostFirst)
{
    QStringList frames;
    for (auto it = outermostFirst.rbegin(); it != outermostFirst.rend(); ++it)
        frames << fromStd(*it);
    return frames.join(QStringLiteral(" ← "));
}
} // namespace

QVariant HolderTableModel::data(const QModelIndex& index, int role) const
{
    if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid))
        return {};
    const Row& row = rows_[static_cast<size_t>(index.row())];
    const reports::HolderRow& h = row.holder;
    if (role == LockIndexRole)
        return row.lock;
    if (role == Qt::TextAlignmentRole)
        return index.column() >= Tid && index.column() <= WaitShare ? QVariant(Qt::AlignRight | Qt::AlignVCenter)
                                                                   : QVariant();
    if (role == FractionRole)
        return index.column() == WaitCharged || index.column() == WaitShare ? QVariant(h.wait_share) : QVariant();
    if (role == Qt::ToolTipRole && index.column() == Path)
        return plainToolTip(pathText(h.frames).replace(QStringLiteral(" ← "), QStringLiteral("\n")));
    if (role != Qt::DisplayRole && role != SortRole)
        return {};
    const bool display = role == Qt::DisplayRole;
    switch (index.column()) {
    case Owner:
        return h.owner_tid ? fromStd(h.owner_comm.empty() ? std::string("?") : h.owner_comm)
                           : tr("(spinlock holder)");
    case Tid:
        return h.owner_tid ? QVariant(qulonglong(*h.owner_tid)) : QVariant();
    case Waits:
        return display ? QVariant(formatCount(h.count)) : QVariant(qulonglong(h.count));
    case WaitCharged:
        return display ? QVariant(formatNs(h.wait_ns)) : QVariant(qulonglong(h.wait_ns));
    case WaitShare:
        return display ? QVariant(formatPercent(h.wait_share)) : QVariant(h.wait_share);
    case Lock:
        return fromStd(capture_->locks[static_cast<size_t>(row.lock)].key);
    case Path:
        return pathText(h.frames);
    default:
        return {};
    }
}

QVariant HolderTableModel::headerData(int section, Qt::Orientation orientation, int role) const
{
    static const char* const names[ColumnCount] = {"Owner", "TID", "Waits", "Wait charged", "Wait %", "Lock",
                                                   "Where the holder was (innermost first)"};
    static const char* const tips[ColumnCount] = {
        "The task that owned the mutex or rwsem when the wait began (record --lock-owner)",
        "The owner's thread id",
        "Waits that found this owner (or holder stack) holding the lock",
        "The wait time of those waits, charged to the holder",
        "Share of the lock's total wait charged to this row (the rest: holder not seen)",
        "The lock that was held",
        "Owners: the owner's kernel stack when the wait began; spinlock holders: the stack that took the lock"};
    return columnHeader(names, tips, section, orientation, role);
}

CallTree holderCallTree(const Capture& capture, const Lock* lock)
{
    CallTree tree(TreeDirection::TopDown);
    const StackIndex index(capture);
    const Stack noStack{0, StackKind::Kernel, {Frame{"[no stack]", 0, "", std::nullopt}}};
    auto add = [&](const Lock& l) {
        // Owners named without their stack shared out over those with one (site_shares.h).
        for (const auto& h : shareOutHolders(l, index).holders) {
            const Stack* s = index.find(h.stack_id);
            tree.addStack(s && !s->frames.empty() ? s->frames : noStack.frames, Weights{h.count, h.wait_ns, 0});
        }
    };
    if (lock)
        add(*lock);
    else
        for (const auto& l : capture.locks)
            add(l);
    return tree;
}

} // namespace lockscope::gui
