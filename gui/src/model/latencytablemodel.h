// SPDX-License-Identifier: GPL-2.0-or-later
#pragma once

#include <memory>

#include <QAbstractTableModel>

#include "lockscope/capture/capture.h"

namespace lockscope::gui {

// The capture's syscall latency entries, then its kernel function latency
// entries, one row each: the numbers a semtimedop / timer_gettime patch is
// argued with, next to the locks.
class LatencyTableModel final : public QAbstractTableModel {
    Q_OBJECT
public:
    enum Column { Kind, Name, Calls, Errors, Mean, P50, P99, Max, ColumnCount };

    explicit LatencyTableModel(QObject* parent = nullptr);

    void setCapture(std::shared_ptr<const Capture> capture);
    const Capture* capture() const noexcept { return capture_.get(); }
    // nullptr when row is out of range; rows index syscalls, then functions.
    const LatencyEntry* entry(int row) const noexcept;
    bool isSyscall(int row) const noexcept;

    int rowCount(const QModelIndex& parent = {}) const override;
    int columnCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

    // "12 345 (1 in 16 timed)", the reports' wording for a sampled entry.
    static QString callsText(const LatencyEntry& e);

private:
    std::shared_ptr<const Capture> capture_;
};

} // namespace lockscope::gui
