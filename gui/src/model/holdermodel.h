// SPDX-License-Identifier: GPL-2.0-or-later
#pragma once

#include <memory>
#include <vector>

#include <QAbstractTableModel>

#include "lockscope/capture/calltree.h"
#include "lockscope/reports/report.h"

namespace lockscope::gui {

// Who held the locks: one row per (lock, owner task, holder path) as the
// reports' "held by" sections (reports::lockHolders), of one lock or of all.
// Mutex/rwsem owners (record --lock-owner) name the task and where it was;
// spinlock holders (record --holder-stacks) only the path.
class HolderTableModel final : public QAbstractTableModel {
    Q_OBJECT
public:
    enum Column { Owner, Tid, Waits, WaitCharged, WaitShare, Lock, Path, ColumnCount };

    struct Row {
        int lock = 0; // index into Capture::locks
        reports::HolderRow holder;
    };

    explicit HolderTableModel(QObject* parent = nullptr);

    // lockIndex -1 = every lock.
    void setCapture(std::shared_ptr<const Capture> capture, int lockIndex);
    const std::vector<Row>& rows() const noexcept { return rows_; }

    int rowCount(const QModelIndex& parent = {}) const override;
    int columnCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

private:
    std::shared_ptr<const Capture> capture_;
    std::vector<Row> rows_;
};

// The holders' stacks as a top-down tree (lock == nullptr: every lock's),
// each weighted by the waits and wait time charged to it: the holder-side
// flame graph, as Go's mutex profile.
CallTree holderCallTree(const Capture& capture, const Lock* lock);

} // namespace lockscope::gui
