// SPDX-License-Identifier: GPL-2.0-or-later
#include "app/comparepage.h"

#include <algorithm>
#include <cmath>
#include <exception>
#include <future>
#include <utility>

#include <QCheckBox>
#include <QComboBox>
#include <QFutureWatcher>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QSortFilterProxyModel>
#include <QSplitter>
#include <QStackedWidget>
#include <QTabWidget>
#include <QTableView>
#include <QTextBrowser>
#include <QVBoxLayout>
#include <QtConcurrent/QtConcurrentRun>

#include "app/capturepage.h"
#include "lockscope/reports/change_order.h"
#include "lockscope/reports/scaling.h"
#include "app/flamegraphwidget.h"
#include "app/histogramchart.h"
#include "app/holdersview.h"
#include "app/scalingview.h"
#include "app/summaryview.h"
#include "model/deltatablemodel.h"
#include "model/latencydeltamodel.h"
#include "model/roles.h"
#include "model/units.h"

namespace lockscope::gui {

namespace {
const QColor kBeforeColor(0x31, 0x82, 0xbd);
const QColor kAfterColor(0xe6, 0x55, 0x0d);
} // namespace

ComparePage::ComparePage(QWidget* parent) : QWidget(parent)
{
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(4, 4, 4, 4);
    headline_ = new QLabel;
    headline_->setWordWrap(true);
    headline_->setTextFormat(Qt::RichText);
    headline_->setTextInteractionFlags(Qt::TextSelectableByMouse);
    QFont f = headline_->font();
    f.setPointSizeF(f.pointSizeF() * 1.15);
    headline_->setFont(f);
    layout->addWidget(headline_);

    tabs_ = new QTabWidget;
    summary_ = new QTextBrowser;
    tabs_->addTab(buildOverview(), tr("Comparison"));
    tabs_->addTab(buildLatencyTab(), tr("Latency"));
    tabs_->addTab(summary_, tr("Summary"));
    tabs_->addTab(buildSideBySide(), tr("Side by side"));
    tabs_->addTab(buildHoldersTab(), tr("Holders"));
    scaling_ = new ScalingView;
    tabs_->addTab(scaling_, tr("Reference scaling"));
    layout->addWidget(tabs_, 1);
    connect(tabs_, &QTabWidget::currentChanged, this, [this] {
        if (tabs_->currentWidget() == sideBySide_ && sidesPending_ && !sidesMaking_)
            prepareSides();
    });
}

QWidget* ComparePage::buildSideBySide()
{
    auto* pages = new QSplitter(Qt::Horizontal);
    beforePage_ = new CapturePage;
    afterPage_ = new CapturePage;
    pages->addWidget(beforePage_);
    pages->addWidget(afterPage_);
    sidesStatus_ = new QLabel;
    sidesStatus_->setAlignment(Qt::AlignCenter);
    sidesStatus_->setWordWrap(true);
    sideBySide_ = new QStackedWidget;
    sideBySide_->addWidget(sidesStatus_);
    sideBySide_->addWidget(pages);
    return sideBySide_;
}

QWidget* ComparePage::sideBySideTab() const noexcept
{
    return sideBySide_;
}

namespace {
struct SidePages {
    PreparedCapture before, after;
    QString error; // why they could not be made
};
} // namespace

// Each side's call tree and flame graph are ~17 MB for a 100k-stack capture:
// made when asked for, they are not held beside the comparison unless the
// user looks at them (the bottom-up tree of a capture page waits likewise).
void ComparePage::prepareSides()
{
    sidesMaking_ = true;
    sidesStatus_->setText(tr("Making each side's call tree and flame graph…"));
    sideBySide_->setCurrentIndex(0);
    const unsigned generation = sidesGeneration_;
    auto* watcher = new QFutureWatcher<SidePages>(this);
    connect(watcher, &QFutureWatcherBase::finished, this, [this, watcher, generation] {
        watcher->deleteLater();
        if (generation != sidesGeneration_)
            return; // a newer comparison came meanwhile: its own pages are made on demand
        SidePages pages = watcher->result();
        sidesMaking_ = false;
        sidesPending_ = false;
        if (!pages.error.isEmpty()) {
            sidesStatus_->setText(tr("Cannot show the captures side by side: %1").arg(pages.error));
        } else {
            beforePage_->setPrepared(std::move(pages.before));
            afterPage_->setPrepared(std::move(pages.after));
            sideBySide_->setCurrentIndex(1);
        }
        emit sidesShown();
    });
    watcher->setFuture(QtConcurrent::run([before = beforeCapture_, after = afterCapture_]() -> SidePages {
        try {
            auto beforePage = std::async(std::launch::async, prepareCapture, before);
            PreparedCapture a = prepareCapture(after);
            return { beforePage.get(), std::move(a), {} };
        } catch (const std::exception& e) {
            return { {}, {}, QString::fromStdString(e.what()) };
        }
    }));
}

QWidget* ComparePage::buildOverview()
{
    auto* vsplit = new QSplitter(Qt::Vertical);

    auto* tablePanel = new QWidget;
    auto* tl = new QVBoxLayout(tablePanel);
    tl->setContentsMargins(0, 0, 0, 0);
    auto* filter = new QLineEdit;
    filter->setPlaceholderText(tr("Filter locks by name…"));
    filter->setClearButtonEnabled(true);
    deltaModel_ = new DeltaTableModel(this);
    deltaProxy_ = makeProxy(this, false);
    deltaProxy_->setSourceModel(deltaModel_);
    connect(filter, &QLineEdit::textChanged, deltaProxy_, &QSortFilterProxyModel::setFilterFixedString);
    deltaView_ = new QTableView;
    deltaView_->setModel(deltaProxy_);
    deltaView_->setSortingEnabled(true);
    deltaView_->sortByColumn(DeltaTableModel::Outcome, Qt::AscendingOrder);
    deltaView_->setSelectionBehavior(QAbstractItemView::SelectRows);
    deltaView_->setSelectionMode(QAbstractItemView::SingleSelection);
    deltaView_->verticalHeader()->hide();
    deltaView_->horizontalHeader()->setStretchLastSection(true);
    connect(deltaView_->selectionModel(), &QItemSelectionModel::currentRowChanged, this,
            [this](const QModelIndex& current) {
                if (current.isValid())
                    selectLock(current.data(LockIndexRole).toInt());
            });
    // A new sort or filter keeps the selected lock in view.
    connect(deltaProxy_, &QSortFilterProxyModel::layoutChanged, this, [this] {
        if (deltaView_->currentIndex().isValid())
            deltaView_->scrollTo(deltaView_->currentIndex());
    });
    tl->addWidget(filter);
    tl->addWidget(deltaView_, 1);
    vsplit->addWidget(tablePanel);

    auto* hsplit = new QSplitter(Qt::Horizontal);
    auto* histPanel = new QWidget;
    auto* hl = new QVBoxLayout(histPanel);
    hl->setContentsMargins(0, 0, 0, 0);
    normalize_ = new QCheckBox(tr("Normalize (share of each side's events)"));
    normalize_->setChecked(true);
    waitChart_ = new HistogramChart(tr("Wait time"));
    holdChart_ = new HistogramChart(tr("Hold time"));
    waitChart_->setNormalized(true);
    holdChart_->setNormalized(true);
    connect(normalize_, &QCheckBox::toggled, this, &ComparePage::setNormalized);
    hl->addWidget(normalize_);
    hl->addWidget(waitChart_, 1);
    hl->addWidget(holdChart_, 1);
    hsplit->addWidget(histPanel);
    hsplit->addWidget(buildFlamePanel());
    hsplit->setStretchFactor(0, 2);
    hsplit->setStretchFactor(1, 3);
    vsplit->addWidget(hsplit);
    vsplit->setStretchFactor(0, 1);
    vsplit->setStretchFactor(1, 2);
    vsplit->setSizes({280, 560});
    return vsplit;
}

QWidget* ComparePage::buildHoldersTab()
{
    auto* split = new QSplitter(Qt::Horizontal);
    for (auto [view, title] : {std::pair{&beforeHolders_, tr("Before")}, std::pair{&afterHolders_, tr("After")}}) {
        auto* panel = new QWidget;
        auto* l = new QVBoxLayout(panel);
        l->setContentsMargins(0, 0, 0, 0);
        l->addWidget(new QLabel(QStringLiteral("<b>%1</b>").arg(title)));
        *view = new HoldersView;
        l->addWidget(*view, 1);
        split->addWidget(panel);
    }
    return split;
}

// Each side's holders of the selected lock, found by key or by a key the
// comparison read as it (LockDelta::also_keyed; none on a side that lacks
// it), or of every lock when none is selected.
void ComparePage::refreshHolders()
{
    const reports::LockDelta* row =
        comparison_ && selected_ >= 0 ? &comparison_->locks[static_cast<size_t>(selected_)] : nullptr;
    for (auto [view, capture] : {std::pair{beforeHolders_, beforeCapture_}, std::pair{afterHolders_, afterCapture_}}) {
        if (!capture || !row) {
            view->show(capture, -1);
            continue;
        }
        const std::vector<Lock>& locks = capture->locks;
        auto keyed = [&locks](const std::string& key) {
            return std::find_if(locks.begin(), locks.end(), [&](const Lock& l) { return l.key == key; });
        };
        auto it = keyed(row->key);
        for (size_t i = 0; it == locks.end() && i < row->also_keyed.size(); ++i)
            it = keyed(row->also_keyed[i]);
        view->show(it == capture->locks.end() ? nullptr : capture,
                   it == capture->locks.end() ? -1 : static_cast<int>(it - capture->locks.begin()));
    }
}

QWidget* ComparePage::buildFlamePanel()
{
    auto* w = new QWidget;
    auto* layout = new QVBoxLayout(w);
    layout->setContentsMargins(0, 0, 0, 0);
    auto* bar = new QHBoxLayout;
    flameWeight_ = new QComboBox;
    flameWeight_->addItem(tr("Wait time"), int(FlameWeight::Wait));
    flameWeight_->addItem(tr("Hold time"), int(FlameWeight::Hold));
    flameWeight_->addItem(tr("Count"), int(FlameWeight::Count));
    widthsFromBefore_ = new QCheckBox(tr("Widths from baseline"));
    widthsFromBefore_->setToolTip(tr("Size frames by the baseline so stacks that vanished stay visible"));
    auto* search = new QLineEdit;
    search->setPlaceholderText(tr("Highlight…"));
    search->setClearButtonEnabled(true);
    auto* legend = new QLabel(tr("<span style='background:#ff5050'>&nbsp;grew&nbsp;</span> "
                                 "<span style='background:#5050ff;color:white'>&nbsp;shrank&nbsp;</span>"));
    legend->setToolTip(tr("The stronger the colour, the more a frame changed against its larger side: "
                          "+25% is pale, doubled or halved is half way, new or gone is full"));
    bar->addWidget(new QLabel(tr("Differential flame graph, width:")));
    bar->addWidget(flameWeight_);
    bar->addWidget(widthsFromBefore_);
    bar->addWidget(search, 1);
    bar->addWidget(legend);
    flame_ = new FlameGraphWidget;
    flameStatus_ = new QLabel;
    flameStatus_->setTextFormat(Qt::PlainText); // frame names
    connect(flameWeight_, &QComboBox::currentIndexChanged, this, [this] { refreshFlame(); });
    connect(widthsFromBefore_, &QCheckBox::toggled, this, [this] { refreshFlame(); });
    connect(search, &QLineEdit::textChanged, flame_, &FlameGraphWidget::setSearch);
    connect(flame_, &FlameGraphWidget::hovered, flameStatus_, &QLabel::setText);
    layout->addLayout(bar);
    layout->addWidget(wrapInScrollArea(flame_), 1);
    layout->addWidget(flameStatus_);
    return w;
}

QWidget* ComparePage::buildLatencyTab()
{
    latencyModel_ = new LatencyDeltaModel(this);
    latencyProxy_ = makeProxy(this, false);
    latencyProxy_->setSourceModel(latencyModel_);
    latencyProxy_->setFilterKeyColumn(LatencyDeltaModel::Name);
    // Not alternating colours: rows are tinted by verdict. The engine's order
    // is syscalls, then functions, by calls.
    latencyView_ = makeLatencyView(latencyProxy_, this, [this](int row) { selectLatency(row); });
    latencyChart_ = new HistogramChart(tr("Latency"));
    latencyChart_->setNormalized(true);
    latencyEmpty_ = new QLabel(tr("Neither capture has syscall or kernel function latency."));
    latencyStack_ = stackLatencyTab(latencyView_, latencyChart_, latencyEmpty_);
    return latencyStack_;
}

bool ComparePage::latencyTableShown() const noexcept
{
    return latencyStack_->currentWidget() != latencyEmpty_;
}

void ComparePage::selectLatency(int row)
{
    if (!latencyModel_->row(row))
        row = -1;
    latencyRow_ = row;
    selectEntryRow(latencyView_, latencyProxy_, row);
    refreshLatency();
}

void ComparePage::refreshLatency()
{
    const reports::LatencyDelta* d = latencyModel_->row(latencyRow_);
    if (!comparison_ || !d) {
        latencyChart_->setTitle(tr("Latency (select a row)"));
        latencyChart_->setSeries({});
        return;
    }
    const QString a = QString::fromStdString(comparison_->before.meta.label.empty() ? "before"
                                                                                    : comparison_->before.meta.label);
    const QString b = QString::fromStdString(comparison_->after.meta.label.empty() ? "after"
                                                                                   : comparison_->after.meta.label);
    latencyChart_->setTitle(tr("Latency of %1").arg(QString::fromStdString(d->name)));
    latencyChart_->setSeries({{a, d->before, kBeforeColor}, {b, d->after, kAfterColor}});
}

void ComparePage::setComparison(
    std::shared_ptr<const reports::Comparison> comparison, CapturePtr before, CapturePtr after)
{
    comparison_ = std::move(comparison);
    deltaModel_->setComparison(comparison_);
    // Columns follow the data: no wait columns when no lock waited, no hold columns without holds.
    for (int col = 0; col < DeltaTableModel::ColumnCount; ++col)
        deltaView_->setColumnHidden(col, !deltaModel_->columnHasData(col));
    deltaView_->resizeColumnsToContents();
    headline_->setText(comparison_ ? QStringLiteral("<b>%1</b>").arg(headlineText(*comparison_).toHtmlEscaped())
                                   : QString());
    summary_->setHtml(comparison_ ? compareSummaryHtml(*comparison_) : QString());
    beforeCapture_ = std::move(before);
    afterCapture_ = std::move(after);
    showReferenceScaling();
    // The last comparison's side pages go: those of this one are made when their tab is shown.
    beforePage_->setPrepared({});
    afterPage_->setPrepared({});
    ++sidesGeneration_;
    sidesMaking_ = false;
    sidesPending_ = comparison_ != nullptr;
    sideBySide_->setCurrentIndex(0);
    if (sidesPending_ && tabs_->currentWidget() == sideBySide_)
        prepareSides();
    refreshFlame();
    latencyModel_->setComparison(comparison_);
    latencyView_->resizeColumnsToContents();
    latencyStack_->setCurrentWidget(latencyModel_->rowCount() > 0 || !comparison_ ? latencyStack_->widget(0)
                                                                                  : latencyEmpty_);
    selectLatency(latencyModel_->rowCount() > 0 ? 0 : -1);
    selected_ = -2;
    selectLock(-1);
    // Open sorted by verdict severity then change (change_order.h, the
    // reports' "Top changed locks" order), on the top row: the biggest news.
    deltaView_->sortByColumn(DeltaTableModel::Outcome, Qt::AscendingOrder);
    if (comparison_ && !comparison_->locks.empty())
        selectLock(static_cast<int>(reports::changedFirstOrder(*comparison_).front()));
}

// The reference pair of the workload the captures ran (the before side's,
// else the after side's: one of them may have followed a pid).
void ComparePage::showReferenceScaling()
{
    std::string workload;
    for (const std::shared_ptr<const Capture>& c : {beforeCapture_, afterCapture_})
        if (c && workload.empty())
            workload = reports::workloadProgram(*c);
    scaling_->showReference(workload);
}

void ComparePage::selectLock(int row)
{
    if (!comparison_ || row < -1 || row >= static_cast<int>(comparison_->locks.size()))
        row = -1;
    const bool changed = row != selected_;
    selected_ = row;
    for (int r = 0; r < deltaProxy_->rowCount(); ++r) {
        const QModelIndex idx = deltaProxy_->index(r, 0);
        if (idx.data(LockIndexRole).toInt() == row) {
            if (changed)
                deltaView_->selectionModel()->setCurrentIndex(
                    idx, QItemSelectionModel::ClearAndSelect | QItemSelectionModel::Rows);
            deltaView_->scrollTo(idx); // a lock selected from outside the table is shown in it
            break;
        }
    }
    if (changed) {
        refreshHistograms();
        refreshHolders();
    }
}

void ComparePage::setNormalized(bool normalized)
{
    normalize_->setChecked(normalized);
    waitChart_->setNormalized(normalized);
    holdChart_->setNormalized(normalized);
    latencyChart_->setNormalized(normalized);
}

void ComparePage::refreshHistograms()
{
    if (!comparison_ || selected_ < 0) {
        waitChart_->setSeries({});
        holdChart_->setSeries({});
        return;
    }
    const reports::LockDelta& l = comparison_->locks[static_cast<size_t>(selected_)];
    const QString key = QString::fromStdString(l.key);
    const QString a = QString::fromStdString(comparison_->before.meta.label.empty() ? "before"
                                                                                    : comparison_->before.meta.label);
    const QString b = QString::fromStdString(comparison_->after.meta.label.empty() ? "after"
                                                                                   : comparison_->after.meta.label);
    waitChart_->setTitle(tr("Wait time of %1").arg(key));
    holdChart_->setTitle(tr("Hold time of %1").arg(key));
    waitChart_->setSeries({{a, l.wait_before, kBeforeColor}, {b, l.wait_after, kAfterColor}});
    holdChart_->setSeries({{a, l.hold_before, kBeforeColor}, {b, l.hold_after, kAfterColor}});
}

void ComparePage::refreshFlame()
{
    if (!comparison_) {
        flame_->setData({});
        return;
    }
    // The graph reads the comparison's tree, which it keeps alive with the comparison.
    flame_->setData(
        flameFromDiffTree(std::shared_ptr<const reports::DiffTree>(comparison_, &comparison_->tree),
            static_cast<FlameWeight>(flameWeight_->currentData().toInt()), widthsFromBefore_->isChecked()));
}

} // namespace lockscope::gui
