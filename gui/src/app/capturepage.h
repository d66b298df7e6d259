// SPDX-License-Identifier: GPL-2.0-or-later
#pragma once

#include <functional>
#include <memory>

#include <QWidget>

#include "app/captureloader.h"
#include "lockscope/reports/report.h"
#include "model/calltreemodel.h"

class QCheckBox;
class QComboBox;
class QLabel;
class QLineEdit;
class QSortFilterProxyModel;
class QStackedWidget;
class QTabWidget;
class QTableView;
class QTextBrowser;
class QTreeView;

namespace lockscope::gui {

class FlameGraphWidget;
class HistogramChart;
class HoldersView;
class LatencyTableModel;
class LockTableModel;

// Everything about one capture: summary, lock table, call trees, flame
// graph and histograms. The lock selected in the table drives the other
// views; with no selection they show all locks together.
class CapturePage final : public QWidget {
    Q_OBJECT
public:
    explicit CapturePage(QWidget* parent = nullptr);

    // Prepares on the calling thread; MainWindow passes captures the loader prepared.
    void setCapture(CapturePtr capture);
    void setPrepared(PreparedCapture prepared);
    const Capture* capture() const noexcept { return capture_.get(); }
    // -1 = all locks
    void selectLock(int lockIndex);
    int selectedLock() const noexcept { return selected_; }

    QTabWidget* tabs() const noexcept { return tabs_; }
    LockTableModel* lockModel() const noexcept { return lockModel_; }
    CallTreeModel* topDownModel() const noexcept { return topDown_; }
    // Empty until the bottom-up tab is shown (callTreeTabs()' second page).
    CallTreeModel* bottomUpModel() const noexcept { return bottomUp_; }
    QTabWidget* callTreeTabs() const noexcept { return callTreeTabs_; }
    FlameGraphWidget* flameGraph() const noexcept { return flame_; }
    HistogramChart* waitChart() const noexcept { return waitChart_; }
    // Holders tab: the owners (comm/tid) of the selected lock and where they were.
    HoldersView* holdersView() const noexcept { return holders_; }
    // Latency tab: syscall and kernel function latency, a histogram of the selected row.
    LatencyTableModel* latencyModel() const noexcept { return latencyModel_; }
    QTableView* latencyView() const noexcept { return latencyView_; }
    HistogramChart* latencyChart() const noexcept { return latencyChart_; }
    // The one line shown instead of the table when the capture has no latency entries.
    QLabel* latencyEmptyLabel() const noexcept { return latencyEmpty_; }
    bool latencyTableShown() const noexcept;
    // row of latencyModel(), -1 = none
    void selectLatency(int row);

private:
    QWidget* buildLocksTab();
    QWidget* buildCallGraphTab();
    QWidget* buildFlameTab();
    QWidget* buildHistogramTab();
    QWidget* buildLatencyTab();
    void refreshLatency();
    void refreshSelection();
    void refreshBottomUp();
    void refreshFlame();

    CapturePtr capture_;
    PreparedCapture prepared_;
    int selected_ = -1;
    std::shared_ptr<const CallTree> topDownTree_;
    std::shared_ptr<const CallTree> allBottomUp_; // all locks' bottom-up tree, once shown
    bool bottomUpStale_ = true;                   // the bottom-up model is not the selection's

    QLabel* selectionLabel_ = nullptr;
    QTabWidget* tabs_ = nullptr;
    QTextBrowser* summary_ = nullptr;
    LockTableModel* lockModel_ = nullptr;
    QSortFilterProxyModel* lockProxy_ = nullptr;
    QTableView* lockView_ = nullptr;
    CallTreeModel* topDown_ = nullptr;
    CallTreeModel* bottomUp_ = nullptr;
    QSortFilterProxyModel* topDownProxy_ = nullptr;
    QSortFilterProxyModel* bottomUpProxy_ = nullptr;
    QTreeView* topDownView_ = nullptr;
    QTreeView* bottomUpView_ = nullptr;
    QTabWidget* callTreeTabs_ = nullptr;
    FlameGraphWidget* flame_ = nullptr;
    QComboBox* flameWeight_ = nullptr;
    QLabel* flameStatus_ = nullptr;
    HistogramChart* waitChart_ = nullptr;
    HistogramChart* holdChart_ = nullptr;
    HistogramChart* acquireChart_ = nullptr; // shown for captures with slow spin acquisitions (record --hold)
    HoldersView* holders_ = nullptr;
    LatencyTableModel* latencyModel_ = nullptr;
    QSortFilterProxyModel* latencyProxy_ = nullptr;
    QTableView* latencyView_ = nullptr;
    HistogramChart* latencyChart_ = nullptr;
    QStackedWidget* latencyStack_ = nullptr;
    QLabel* latencyEmpty_ = nullptr;
    int latencyRow_ = -1;
};

// Shared by the pages: a proxy that sorts on SortRole and filters case-
// insensitively on column 0 (recursively for trees).
QSortFilterProxyModel* makeProxy(QObject* parent, bool recursive);
QWidget* wrapInScrollArea(QWidget* w);
// A latency table over proxy: sortable with no initial sort (the model's
// order, syscalls then functions), one row selected at a time; onSelect gets
// the EntryIndexRole of the row made current.
QTableView* makeLatencyView(QSortFilterProxyModel* proxy, QObject* receiver, std::function<void(int)> onSelect);
// The Latency tab: table over chart in a splitter, or the one line of empty
// in its place (the stack's current widget says which).
QStackedWidget* stackLatencyTab(QWidget* table, HistogramChart* chart, QLabel* empty);
// Makes the view's current row the one whose EntryIndexRole is row (none
// when row < 0), unless it already is.
void selectEntryRow(QTableView* view, QSortFilterProxyModel* proxy, int row);

} // namespace lockscope::gui
