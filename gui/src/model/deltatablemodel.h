// SPDX-License-Identifier: GPL-2.0-or-later
#pragma once

#include <memory>
#include <vector>

#include <QAbstractTableModel>

#include "lockscope/reports/compare.h"

namespace lockscope::gui {

// The per-lock rows of a reports::Comparison. Every figure, percentage and
// verdict comes from the comparison engine; this model only presents them,
// tints rows by verdict and explains each column in its header tooltip.
// The verdict, its test and its p-value come from one Judgement, so no row
// shows a verdict beside another test's p-value; wait and hold columns are
// reported empty (columnHasData) when no lock has that kind of data.
class DeltaTableModel final : public QAbstractTableModel {
    Q_OBJECT
public:
    enum Column {
        Key,
        Type,
        Outcome,
        Figure,       // the judged figure: the strongest change among wait and hold (per op when throughput changed)
        Before,       // its mean over the baseline runs (± CV with runs)
        After,
        Change,       // Δ% of the means
        Test,         // the test that gave the verdict
        PValue,       // that test's p-value
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
        HoldsBefore,
        HoldsAfter,
        HoldBefore,
        HoldAfter,
        HoldPct,
        AvgHoldPct,
        OtherChanges, // the lock's other figures with a verdict of their own ("holds/op +900%: more (worse)")
        ColumnCount
    };

    explicit DeltaTableModel(QObject* parent = nullptr);

    void setComparison(std::shared_ptr<const reports::Comparison> comparison);
    const reports::Comparison* comparison() const noexcept { return comparison_.get(); }

    int rowCount(const QModelIndex& parent = {}) const override;
    int columnCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation, int role = Qt::DisplayRole) const override;

    // False for wait columns when no lock has waits, hold columns when none has holds.
    bool columnHasData(int column) const;

    static QString verdictLabel(reports::Verdict v);
    static QColor verdictTint(reports::Verdict v);

private:
    std::shared_ptr<const reports::Comparison> comparison_;
    std::vector<int> rank_; // by row: its place in reports::changedFirstOrder
};

} // namespace lockscope::gui
