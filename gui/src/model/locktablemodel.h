// SPDX-License-Identifier: GPL-2.0-or-later
#pragma once

#include <memory>
#include <vector>

#include <QAbstractTableModel>

#include "lockscope/capture/capture.h"
#include "lockscope/reports/lock_columns.h"

namespace lockscope::gui {

// One row per lock of a capture with the columns of the text report.
class LockTableModel final : public QAbstractTableModel {
    Q_OBJECT
public:
    enum Column {
        Key,
        Type,
        Instances,
        Contentions,
        WaitTotal,
        WaitAvg,
        WaitP99,
        WaitMax,
        WaitShare,
        HoldCount,
        HoldTotal,
        HoldAvg,
        HoldMax,
        AcquireCount,
        AcquireP99,
        Sites,
        ColumnCount
    };

    explicit LockTableModel(QObject* parent = nullptr);

    void setCapture(std::shared_ptr<const Capture> capture);
    const Capture* capture() const noexcept { return capture_.get(); }

    int rowCount(const QModelIndex& parent = {}) const override;
    int columnCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

private:
    std::shared_ptr<const Capture> capture_;
    // Each lock's percentiles and tail bases, worked out once: sorting 10k
    // rows asks for a cell some 260k times, each used to work them out anew.
    std::vector<reports::LockFigures> figures_;
    uint64_t totalWait_ = 0;
};

} // namespace lockscope::gui
