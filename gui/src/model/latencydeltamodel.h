// SPDX-License-Identifier: GPL-2.0-or-later
#pragma once

#include <memory>
#include <optional>

#include <QAbstractTableModel>

#include "lockscope/reports/compare.h"

namespace lockscope::gui {

// The syscall, then kernel function, latency rows of a reports::Comparison,
// matched by name by the engine. Figures and verdicts are the engine's; the
// only figure added here is the after/before ratio of the means.
class LatencyDeltaModel final : public QAbstractTableModel {
    Q_OBJECT
public:
    enum Column {
        Kind,
        Name,
        Outcome,
        CallsBefore,
        MeanBefore,
        P99Before,
        CallsAfter,
        MeanAfter,
        P99After,
        MeanRatio,
        ColumnCount
    };

    explicit LatencyDeltaModel(QObject* parent = nullptr);

    void setComparison(std::shared_ptr<const reports::Comparison> comparison);
    const reports::Comparison* comparison() const noexcept { return comparison_.get(); }
    // nullptr when row is out of range; rows index syscalls, then functions.
    const reports::LatencyDelta* row(int row) const noexcept;
    bool isSyscall(int row) const noexcept;
    // after mean / before mean; empty when a side has no timed call.
    static std::optional<double> meanRatio(const reports::LatencyDelta& d);

    int rowCount(const QModelIndex& parent = {}) const override;
    int columnCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

private:
    std::shared_ptr<const reports::Comparison> comparison_;
};

} // namespace lockscope::gui
