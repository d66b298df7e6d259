// SPDX-License-Identifier: GPL-2.0-or-later
#include "app/capturepage.h"

#include <algorithm>

#include <QCheckBox>
#include <QCoreApplication>
#include <QComboBox>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QScrollArea>
#include <QSortFilterProxyModel>
#include <QSplitter>
#include <QStackedWidget>
#include <QTabWidget>
#include <QTableView>
#include <QTextBrowser>
#include <QTreeView>
#include <QVBoxLayout>

#include "app/flamegraphwidget.h"
#include "app/histogramchart.h"
#include "app/holdersview.h"
#include "app/summaryview.h"
#include "model/latencytablemodel.h"
#include "model/locktablemodel.h"
#include "model/roles.h"
#include "model/units.h"

namespace lockscope::gui {

QSortFilterProxyModel* makeProxy(QObject* parent, bool recursive)
{
    auto* proxy = new QSortFilterProxyModel(parent);
    proxy->setSortRole(SortRole);
    proxy->setFilterCaseSensitivity(Qt::CaseInsensitive);
    proxy->setFilterKeyColumn(0);
    proxy->setRecursiveFilteringEnabled(recursive);
    proxy->setAutoAcceptChildRows(recursive);
    return proxy;
}

QWidget* wrapInScrollArea(QWidget* w)
{
    auto* area = new QScrollArea;
    area->setWidget(w);
    area->setWidgetResizable(true);
    area->setFrameShape(QFrame::NoFrame);
    return area;
}

QTableView* makeLatencyView(QSortFilterProxyModel* proxy, QObject* receiver, std::function<void(int)> onSelect)
{
    auto* view = new QTableView;
    view->setModel(proxy);
    view->horizontalHeader()->setSortIndicator(-1, Qt::AscendingOrder);
    view->setSortingEnabled(true);
    view->setSelectionBehavior(QAbstractItemView::SelectRows);
    view->setSelectionMode(QAbstractItemView::SingleSelection);
    view->verticalHeader()->hide();
    view->horizontalHeader()->setStretchLastSection(false); // a wide Max column reads as detached
    QObject::connect(view->selectionModel(), &QItemSelectionModel::currentRowChanged, receiver,
                     [onSelect = std::move(onSelect)](const QModelIndex& current) {
                         if (current.isValid())
                             onSelect(current.data(EntryIndexRole).toInt());
                     });
    return view;
}

QStackedWidget* stackLatencyTab(QWidget* table, HistogramChart* chart, QLabel* empty)
{
    auto* split = new QSplitter(Qt::Vertical);
    split->addWidget(table);
    split->addWidget(chart);
    split->setStretchFactor(0, 1);
    split->setStretchFactor(1, 2);
    split->setSizes({260, 420});
    empty->setAlignment(Qt::AlignTop | Qt::AlignLeft);
    empty->setMargin(8);
    auto* stack = new QStackedWidget;
    stack->addWidget(split);
    stack->addWidget(empty);
    return stack;
}

void selectEntryRow(QTableView* view, QSortFilterProxyModel* proxy, int row)
{
    const QModelIndex current = view->selectionModel()->currentIndex();
    if (row < 0) {
        view->clearSelection();
    } else if (!current.isValid() || current.data(EntryIndexRole).toInt() != row) {
        const QModelIndexList match = proxy->match(proxy->index(0, 0), EntryIndexRole, row, 1, Qt::MatchExactly);
        if (!match.isEmpty())
            view->selectionModel()->setCurrentIndex(match.front(),
                                                    QItemSelectionModel::ClearAndSelect | QItemSelectionModel::Rows);
    }
}

namespace {
QTreeView* makeTreeView(QSortFilterProxyModel* proxy)
{
    auto* view = new QTreeView;
    view->setModel(proxy);
    view->setSortingEnabled(true);
    view->sortByColumn(CallTreeTraits::Wait, Qt::DescendingOrder);
    view->setUniformRowHeights(true);
    view->setAlternatingRowColors(true);
    view->header()->setSectionResizeMode(0, QHeaderView::Interactive);
    view->header()->resizeSection(0, 360);
    return view;
}

// The latency tab's text when it has nothing to show; skipped: why record
// did not time syscalls (syscallTimingNotMeasured), "" if told not to.
QString emptyLatencyText(const std::string& skipped)
{
    QString text = QCoreApplication::translate("CapturePage", "This capture has no syscall or kernel function latency "
                                                              "(record with the syscall or function latency probes to get it).");
    if (!skipped.empty())
        text += QLatin1Char(' ') + QString::fromStdString(skipped) + QLatin1Char('.');
    return text;
}

// Expands the hottest path so the tree opens on something useful.
void expandHottest(QTreeView* view, int levels)
{
    QModelIndex idx = view->model()->index(0, 0);
    for (int i = 0; i < levels && idx.isValid(); ++i) {
        view->expand(idx);
        idx = view->model()->index(0, 0, idx);
    }
}
} // namespace

CapturePage::CapturePage(QWidget* parent) : QWidget(parent)
{
    prepared_.report = std::make_shared<const reports::Report>();
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(4, 4, 4, 4);
    auto* bar = new QHBoxLayout;
    selectionLabel_ = new QLabel;
    auto* all = new QPushButton(tr("Show all locks"));
    connect(all, &QPushButton::clicked, this, [this] { selectLock(-1); });
    bar->addWidget(selectionLabel_, 1);
    bar->addWidget(all);
    layout->addLayout(bar);

    tabs_ = new QTabWidget;
    summary_ = new QTextBrowser;
    tabs_->addTab(summary_, tr("Summary"));
    tabs_->addTab(buildLocksTab(), tr("Locks"));
    tabs_->addTab(buildCallGraphTab(), tr("Call graph"));
    tabs_->addTab(buildFlameTab(), tr("Flame graph"));
    tabs_->addTab(buildHistogramTab(), tr("Histograms"));
    holders_ = new HoldersView;
    tabs_->addTab(holders_, tr("Holders"));
    tabs_->addTab(buildLatencyTab(), tr("Latency"));
    layout->addWidget(tabs_, 1);
}

QWidget* CapturePage::buildLocksTab()
{
    auto* w = new QWidget;
    auto* layout = new QVBoxLayout(w);
    auto* filter = new QLineEdit;
    filter->setPlaceholderText(tr("Filter locks by name…"));
    filter->setClearButtonEnabled(true);
    lockModel_ = new LockTableModel(this);
    lockProxy_ = makeProxy(this, false);
    lockProxy_->setSourceModel(lockModel_);
    connect(filter, &QLineEdit::textChanged, lockProxy_, &QSortFilterProxyModel::setFilterFixedString);
    lockView_ = new QTableView;
    lockView_->setModel(lockProxy_);
    lockView_->setSortingEnabled(true);
    lockView_->sortByColumn(LockTableModel::WaitTotal, Qt::DescendingOrder);
    lockView_->setSelectionBehavior(QAbstractItemView::SelectRows);
    lockView_->setSelectionMode(QAbstractItemView::SingleSelection);
    lockView_->verticalHeader()->hide();
    lockView_->setAlternatingRowColors(true);
    lockView_->horizontalHeader()->setStretchLastSection(true);
    connect(lockView_->selectionModel(), &QItemSelectionModel::currentRowChanged, this,
            [this](const QModelIndex& current) {
                if (current.isValid())
                    selectLock(current.data(LockIndexRole).toInt());
            });
    layout->addWidget(filter);
    layout->addWidget(lockView_, 1);
    return w;
}

QWidget* CapturePage::buildCallGraphTab()
{
    auto* w = new QWidget;
    auto* layout = new QVBoxLayout(w);
    auto* filter = new QLineEdit;
    filter->setPlaceholderText(tr("Filter functions…"));
    filter->setClearButtonEnabled(true);
    topDown_ = new CallTreeModel(this);
    bottomUp_ = new CallTreeModel(this);
    topDownProxy_ = makeProxy(this, true);
    bottomUpProxy_ = makeProxy(this, true);
    topDownProxy_->setSourceModel(topDown_);
    bottomUpProxy_->setSourceModel(bottomUp_);
    connect(filter, &QLineEdit::textChanged, topDownProxy_, &QSortFilterProxyModel::setFilterFixedString);
    connect(filter, &QLineEdit::textChanged, bottomUpProxy_, &QSortFilterProxyModel::setFilterFixedString);
    topDownView_ = makeTreeView(topDownProxy_);
    bottomUpView_ = makeTreeView(bottomUpProxy_);
    callTreeTabs_ = new QTabWidget;
    callTreeTabs_->addTab(topDownView_, tr("Top-down (callers first)"));
    callTreeTabs_->addTab(bottomUpView_, tr("Bottom-up (lock functions first)"));
    connect(callTreeTabs_, &QTabWidget::currentChanged, this, [this] { refreshBottomUp(); });
    layout->addWidget(filter);
    layout->addWidget(callTreeTabs_, 1);
    return w;
}

QWidget* CapturePage::buildFlameTab()
{
    auto* w = new QWidget;
    auto* layout = new QVBoxLayout(w);
    auto* bar = new QHBoxLayout;
    flameWeight_ = new QComboBox;
    flameWeight_->addItem(tr("Wait time"), int(FlameWeight::Wait));
    flameWeight_->addItem(tr("Hold time"), int(FlameWeight::Hold));
    flameWeight_->addItem(tr("Count"), int(FlameWeight::Count));
    auto* search = new QLineEdit;
    search->setPlaceholderText(tr("Highlight functions…"));
    search->setClearButtonEnabled(true);
    auto* reset = new QPushButton(tr("Reset zoom"));
    bar->addWidget(new QLabel(tr("Width:")));
    bar->addWidget(flameWeight_);
    bar->addWidget(search, 1);
    bar->addWidget(reset);
    flame_ = new FlameGraphWidget;
    flameStatus_ = new QLabel;
    flameStatus_->setTextFormat(Qt::PlainText); // frame names
    flameStatus_->setTextInteractionFlags(Qt::TextSelectableByMouse);
    connect(flameWeight_, &QComboBox::currentIndexChanged, this, [this] { refreshFlame(); });
    connect(search, &QLineEdit::textChanged, this, [this](const QString& text) {
        flame_->setSearch(text);
        flameStatus_->setText(text.isEmpty() ? QString()
                                             : tr("“%1” matches %2 of the graph")
                                                   .arg(text, formatPercent(flame_->searchCoveredShare())));
    });
    connect(reset, &QPushButton::clicked, this, [this] { flame_->zoomTo(0); });
    connect(flame_, &FlameGraphWidget::hovered, flameStatus_, &QLabel::setText);
    layout->addLayout(bar);
    layout->addWidget(wrapInScrollArea(flame_), 1);
    layout->addWidget(flameStatus_);
    return w;
}

QWidget* CapturePage::buildHistogramTab()
{
    auto* w = new QWidget;
    auto* layout = new QVBoxLayout(w);
    auto* share = new QCheckBox(tr("Share of events on the y axis (instead of counts)"));
    waitChart_ = new HistogramChart(tr("Wait time"));
    holdChart_ = new HistogramChart(tr("Hold time"));
    acquireChart_ = new HistogramChart(tr("Acquire time (spin in the lock call)"));
    acquireChart_->hide();
    connect(share, &QCheckBox::toggled, this, [this](bool on) {
        waitChart_->setNormalized(on);
        holdChart_->setNormalized(on);
        acquireChart_->setNormalized(on);
    });
    auto* charts = new QHBoxLayout;
    charts->addWidget(waitChart_);
    charts->addWidget(holdChart_);
    charts->addWidget(acquireChart_);
    layout->addWidget(share);
    layout->addLayout(charts, 1);
    return w;
}

QWidget* CapturePage::buildLatencyTab()
{
    latencyModel_ = new LatencyTableModel(this);
    latencyProxy_ = makeProxy(this, false);
    latencyProxy_->setSourceModel(latencyModel_);
    latencyProxy_->setFilterKeyColumn(LatencyTableModel::Name);
    auto* tablePanel = new QWidget;
    auto* tl = new QVBoxLayout(tablePanel);
    tl->setContentsMargins(0, 0, 0, 0);
    auto* filter = new QLineEdit;
    filter->setPlaceholderText(tr("Filter syscalls and functions by name…"));
    filter->setClearButtonEnabled(true);
    connect(filter, &QLineEdit::textChanged, latencyProxy_, &QSortFilterProxyModel::setFilterFixedString);
    latencyView_ = makeLatencyView(latencyProxy_, this, [this](int row) { selectLatency(row); });
    latencyView_->setAlternatingRowColors(true);
    tl->addWidget(filter);
    tl->addWidget(latencyView_, 1);
    latencyChart_ = new HistogramChart(tr("Latency"));
    latencyEmpty_ = new QLabel(emptyLatencyText({}));
    latencyEmpty_->setWordWrap(true); // a skip reason is a long line
    latencyStack_ = stackLatencyTab(tablePanel, latencyChart_, latencyEmpty_);
    return latencyStack_;
}

bool CapturePage::latencyTableShown() const noexcept
{
    return latencyStack_->currentWidget() != latencyEmpty_;
}

void CapturePage::selectLatency(int row)
{
    if (!latencyModel_->entry(row))
        row = -1;
    latencyRow_ = row;
    selectEntryRow(latencyView_, latencyProxy_, row);
    refreshLatency();
}

void CapturePage::refreshLatency()
{
    const LatencyEntry* e = latencyModel_->entry(latencyRow_);
    if (!e) {
        latencyChart_->setTitle(tr("Latency (select a row)"));
        latencyChart_->setSeries({});
        return;
    }
    const QString name = fromStd(e->name);
    const bool syscall = latencyModel_->isSyscall(latencyRow_);
    QString title = syscall ? tr("Latency of the %1 syscall").arg(name) : tr("Latency of %1()").arg(name);
    if (e->sample_period > 1)
        title += tr(" — 1 in %1 calls timed").arg(e->sample_period);
    latencyChart_->setTitle(title);
    latencyChart_->setSeries({{name, e->latency, syscall ? QColor(0x75, 0x6b, 0xb1) : QColor(0x31, 0xa3, 0x54)}});
}

void CapturePage::setCapture(CapturePtr capture)
{
    setPrepared(prepareCapture(std::move(capture)));
}

void CapturePage::setPrepared(PreparedCapture prepared)
{
    prepared_ = std::move(prepared);
    if (!prepared_.report)
        prepared_.report = std::make_shared<const reports::Report>();
    capture_ = prepared_.capture;
    allBottomUp_.reset();
    summary_->setHtml(capture_ ? summaryHtml(*prepared_.report) : QString());
    lockModel_->setCapture(capture_);
    // Acquire times exist only where the hold probe timed slow acquisitions.
    const bool acquire = capture_ && std::any_of(capture_->locks.begin(), capture_->locks.end(),
                                                 [](const Lock& l) { return !l.acquire.empty(); });
    lockView_->setColumnHidden(LockTableModel::AcquireCount, !acquire);
    lockView_->setColumnHidden(LockTableModel::AcquireP99, !acquire);
    acquireChart_->setVisible(acquire);
    lockView_->resizeColumnsToContents();
    latencyModel_->setCapture(capture_);
    latencyView_->resizeColumnsToContents();
    latencyStack_->setCurrentWidget(latencyModel_->rowCount() > 0 || !capture_ ? latencyStack_->widget(0)
                                                                               : latencyEmpty_);
    latencyEmpty_->setText(
        emptyLatencyText(capture_ ? syscallTimingNotMeasured(capture_->meta, capture_->probes) : std::string()));
    // Open on the first row so the histogram is never blank while there is something to show.
    selectLatency(latencyModel_->rowCount() > 0 ? 0 : -1);
    selected_ = -2; // force a refresh
    selectLock(-1);
}

void CapturePage::selectLock(int lockIndex)
{
    if (!capture_ || lockIndex < -1 || lockIndex >= static_cast<int>(capture_->locks.size()))
        lockIndex = -1;
    if (lockIndex == selected_)
        return;
    selected_ = lockIndex;
    if (lockIndex < 0)
        lockView_->clearSelection();
    refreshSelection();
}

void CapturePage::refreshSelection()
{
    if (!capture_) {
        topDownTree_.reset();
        topDown_->setTree(nullptr);
        bottomUp_->setTree(nullptr);
        flame_->setData({});
        holders_->show(nullptr, -1);
        return;
    }
    const Lock* lock = selected_ >= 0 ? &capture_->locks[static_cast<size_t>(selected_)] : nullptr;
    selectionLabel_->setText(lock ? tr("Lock: <b>%1</b> (%2)").arg(fromStd(lock->key).toHtmlEscaped(), fromStd(lock->type).toHtmlEscaped())
                                  : tr("All %1 locks").arg(capture_->locks.size()));
    topDownTree_ = lock ? std::make_shared<const CallTree>(CallTree::forLock(*capture_, *lock, TreeDirection::TopDown))
                        : prepared_.topDown;
    topDown_->setTree(topDownTree_);
    expandHottest(topDownView_, 6);
    bottomUp_->setTree(nullptr);
    bottomUpStale_ = true;
    refreshBottomUp();
    refreshFlame();
    holders_->show(capture_, selected_);

    Log2Hist wait, hold, acquire;
    if (lock) {
        wait = lock->wait;
        hold = lock->hold;
        acquire = lock->acquire;
    } else {
        for (const auto& l : capture_->locks) {
            wait.merge(l.wait);
            hold.merge(l.hold);
            acquire.merge(l.acquire);
        }
    }
    const QString name = lock ? fromStd(lock->key) : tr("all locks");
    waitChart_->setSeries({{name, wait, QColor(0xd9, 0x5f, 0x0e)}});
    holdChart_->setSeries({{name, hold, QColor(0x31, 0x82, 0xbd)}});
    acquireChart_->setSeries({{name, acquire, QColor(0x75, 0x6b, 0xb1)}});
}

// The bottom-up tree is made when its tab is shown: of a whole 100k-stack
// capture it is as big as the top-down one (24 MB), and most looks at a
// capture never turn to it.
void CapturePage::refreshBottomUp()
{
    if (!bottomUpStale_ || !capture_ || callTreeTabs_->currentWidget() != bottomUpView_)
        return;
    bottomUpStale_ = false;
    if (selected_ >= 0) {
        const Lock& lock = capture_->locks[static_cast<size_t>(selected_)];
        bottomUp_->setTree(std::make_shared<const CallTree>(CallTree::forLock(*capture_, lock, TreeDirection::BottomUp)));
    } else {
        if (!allBottomUp_)
            allBottomUp_ = std::make_shared<const CallTree>(CallTree::forCapture(*capture_, TreeDirection::BottomUp));
        bottomUp_->setTree(allBottomUp_);
    }
    expandHottest(bottomUpView_, 3);
}

void CapturePage::refreshFlame()
{
    if (!topDownTree_)
        return;
    const auto weight = static_cast<FlameWeight>(flameWeight_->currentData().toInt());
    if (topDownTree_ == prepared_.topDown && prepared_.flame && prepared_.flame->weight == weight)
        flame_->setSharedData(prepared_.flame);
    else
        flame_->setData(flameFromCallTree(topDownTree_, weight));
}

} // namespace lockscope::gui
