// SPDX-License-Identifier: GPL-2.0-or-later
#pragma once

#include <memory>

#include <QAbstractTableModel>

#include "lockscope/reports/compare.h"

namespace lockscope::gui {

// The per-lock rows of a reports::Comparison. Every figure, percentage and
// verdict comes from the comparison engine; this model only presents them,
// tints rows by verdict and explains each column in its header tooltip.
class DeltaTableModel final : public QAbstractTableModel {
    Q_OBJECT
public:
    enum Column {
        Key,
        Type,
        Outcome,
        ContentionsBefore,
        ContentionsAfter,
        ContentionsPct,
        WaitBefore,
        WaitAfter,
        WaitDelta,
        WaitPct,
        AvgWaitPct,
        P99WaitPct,
        MaxWaitPct,
        HoldPct,
        PValue,
        ColumnCount
    };

    explicit DeltaTableModel(QObject* parent = nullptr);

    void setComparison(std::shared_ptr<const reports::Comparison> comparison);
    const reports::Comparison* comparison() const noexcept { return comparison_.get(); }

    int rowCount(const QModelIndex& parent = {}) const override;
    int columnCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

    static QString verdictLabel(reports::Verdict v);
    static QColor verdictTint(reports::Verdict v);

private:
    std::shared_ptr<const reports::Comparison> comparison_;
};

} // namespace lockscope::gui
