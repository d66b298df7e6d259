// SPDX-License-Identifier: GPL-2.0-or-later
#pragma once

#include <memory>

#include <QWidget>

#include "app/captureloader.h"
#include "lockscope/reports/compare.h"

class QCheckBox;
class QComboBox;
class QLabel;
class QSortFilterProxyModel;
class QStackedWidget;
class QTabWidget;
class QTableView;
class QTextBrowser;

namespace lockscope::gui {

class CapturePage;
class DeltaTableModel;
class FlameGraphWidget;
class HoldersView;
class HistogramChart;
class LatencyDeltaModel;
class ScalingView;

// Baseline against patched, as computed by reports::compare(): the delta
// table, overlaid histograms of the selected lock, the differential flame
// graph, both metadata blocks with the headline, and the two captures side
// by side.
class ComparePage final : public QWidget {
    Q_OBJECT
public:
    explicit ComparePage(QWidget* parent = nullptr);

    // The captures stand for each side (the first run of a run set). Their
    // pages are made when the "Side by side" tab is first shown (sidesShown).
    void setComparison(
        std::shared_ptr<const reports::Comparison> comparison, CapturePtr before, CapturePtr after);
    const reports::Comparison* comparison() const noexcept { return comparison_.get(); }
    void selectLock(int row);
    int selectedLock() const noexcept { return selected_; }
    void setNormalized(bool normalized);

    ScalingView* scalingView() const noexcept { return scaling_; }
    QTabWidget* tabs() const noexcept { return tabs_; }
    DeltaTableModel* deltaModel() const noexcept { return deltaModel_; }
    FlameGraphWidget* flameGraph() const noexcept { return flame_; }
    // Each side's own capture, as the capture page shows one: empty until
    // the "Side by side" tab is shown and sidesShown() is emitted.
    CapturePage* beforePage() const noexcept { return beforePage_; }
    CapturePage* afterPage() const noexcept { return afterPage_; }
    QWidget* sideBySideTab() const noexcept;
    // The side pages of the current comparison are being made, or wait for their tab.
    bool sidesPending() const noexcept { return sidesPending_; }
    // The Holders tab: the selected lock's holders (or every lock's) before and after.
    HoldersView* beforeHolders() const noexcept { return beforeHolders_; }
    HoldersView* afterHolders() const noexcept { return afterHolders_; }
    HistogramChart* waitChart() const noexcept { return waitChart_; }
    QLabel* headline() const noexcept { return headline_; }
    // Latency tab: syscalls and kernel functions matched by name, overlaid histograms of the selected row.
    LatencyDeltaModel* latencyModel() const noexcept { return latencyModel_; }
    HistogramChart* latencyChart() const noexcept { return latencyChart_; }
    QLabel* latencyEmptyLabel() const noexcept { return latencyEmpty_; }
    bool latencyTableShown() const noexcept;
    // row of latencyModel(), -1 = none
    void selectLatency(int row);
    int selectedLatency() const noexcept { return latencyRow_; }

signals:
    // The side pages were made (or could not be: the tab says why).
    void sidesShown();

private:
    QWidget* buildOverview();
    QWidget* buildSideBySide();
    void prepareSides();
    QWidget* buildFlamePanel();
    QWidget* buildLatencyTab();
    QWidget* buildHoldersTab();
    void showReferenceScaling();
    void refreshHolders();
    void refreshLatency();
    void refreshFlame();
    void refreshHistograms();

    std::shared_ptr<const reports::Comparison> comparison_;
    int selected_ = -1;

    QLabel* headline_ = nullptr;
    QTabWidget* tabs_ = nullptr;
    QTextBrowser* summary_ = nullptr;
    DeltaTableModel* deltaModel_ = nullptr;
    QSortFilterProxyModel* deltaProxy_ = nullptr;
    QTableView* deltaView_ = nullptr;
    QCheckBox* normalize_ = nullptr;
    HistogramChart* waitChart_ = nullptr;
    HistogramChart* holdChart_ = nullptr;
    FlameGraphWidget* flame_ = nullptr;
    QComboBox* flameWeight_ = nullptr;
    QCheckBox* widthsFromBefore_ = nullptr;
    QLabel* flameStatus_ = nullptr;
    CapturePage* beforePage_ = nullptr;
    CapturePage* afterPage_ = nullptr;
    QStackedWidget* sideBySide_ = nullptr; // sidesStatus_ until the two pages are made
    QLabel* sidesStatus_ = nullptr; // making them, or why they could not be made
    bool sidesPending_ = false;
    bool sidesMaking_ = false;
    unsigned sidesGeneration_ = 0; // the comparison the pages being made are for
    ScalingView* scaling_ = nullptr;
    HoldersView* beforeHolders_ = nullptr;
    HoldersView* afterHolders_ = nullptr;
    std::shared_ptr<const Capture> beforeCapture_, afterCapture_; // for the Holders tab
    LatencyDeltaModel* latencyModel_ = nullptr;
    QSortFilterProxyModel* latencyProxy_ = nullptr;
    QTableView* latencyView_ = nullptr;
    HistogramChart* latencyChart_ = nullptr;
    QStackedWidget* latencyStack_ = nullptr;
    QLabel* latencyEmpty_ = nullptr;
    int latencyRow_ = -1;
};

} // namespace lockscope::gui
