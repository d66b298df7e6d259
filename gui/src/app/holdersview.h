// SPDX-License-Identifier: GPL-2.0-or-later
#pragma once

#include <memory>

#include <QWidget>

#include "lockscope/capture/capture.h"

class QLabel;
class QSortFilterProxyModel;
class QStackedWidget;
class QTableView;

namespace lockscope::gui {

class FlameGraphWidget;
class HolderTableModel;

// The Holders tab: who held the selected lock (or every lock) while others
// waited, a table of owner tasks (comm/tid), waits and wait charged, over a
// flame graph of where the holders were. A capture without holders shows one
// line saying how to record them instead.
class HoldersView final : public QWidget {
    Q_OBJECT
public:
    explicit HoldersView(QWidget* parent = nullptr);

    // lockIndex -1 = every lock.
    void show(std::shared_ptr<const Capture> capture, int lockIndex);

    HolderTableModel* model() const noexcept { return model_; }
    QTableView* table() const noexcept { return table_; }
    FlameGraphWidget* flameGraph() const noexcept { return flame_; }
    bool emptyShown() const noexcept;

private:
    HolderTableModel* model_ = nullptr;
    QSortFilterProxyModel* proxy_ = nullptr;
    QTableView* table_ = nullptr;
    FlameGraphWidget* flame_ = nullptr;
    QLabel* status_ = nullptr;
    QLabel* empty_ = nullptr;
    QStackedWidget* stack_ = nullptr;
};

} // namespace lockscope::gui
