// SPDX-License-Identifier: GPL-2.0-or-later
#include "app/holdersview.h"

#include <QHeaderView>
#include <QItemSelectionModel>
#include <QLabel>
#include <QSortFilterProxyModel>
#include <QSplitter>
#include <QStackedWidget>
#include <QTableView>
#include <QVBoxLayout>

#include "app/capturepage.h"
#include "app/flamegraphwidget.h"
#include "model/flamedata.h"
#include "model/holdermodel.h"

namespace lockscope::gui {

HoldersView::HoldersView(QWidget* parent) : QWidget(parent)
{
    model_ = new HolderTableModel(this);
    proxy_ = makeProxy(this, false);
    proxy_->setSourceModel(model_);
    table_ = new QTableView;
    table_->setModel(proxy_);
    table_->setSortingEnabled(true);
    table_->sortByColumn(HolderTableModel::WaitCharged, Qt::DescendingOrder);
    table_->setSelectionBehavior(QAbstractItemView::SelectRows);
    table_->verticalHeader()->hide();
    table_->setAlternatingRowColors(true);
    table_->horizontalHeader()->setStretchLastSection(true);

    flame_ = new FlameGraphWidget;
    status_ = new QLabel(tr("Flame graph of where the holders were, widths = wait time charged to them"));
    status_->setTextFormat(Qt::PlainText); // frame names
    connect(flame_, &FlameGraphWidget::hovered, status_, &QLabel::setText);
    auto* flamePanel = new QWidget;
    auto* fl = new QVBoxLayout(flamePanel);
    fl->setContentsMargins(0, 0, 0, 0);
    fl->addWidget(wrapInScrollArea(flame_), 1);
    fl->addWidget(status_);

    // A holder row zooms the flame graph to its path (where that holder was).
    connect(table_->selectionModel(), &QItemSelectionModel::currentRowChanged, this,
            [this](const QModelIndex& current) {
                if (!current.isValid())
                    return;
                const int row = proxy_->mapToSource(current).row();
                if (row >= 0 && static_cast<size_t>(row) < model_->rows().size())
                    flame_->zoomTo(flameNodeOnPath(flame_->data(), model_->rows()[static_cast<size_t>(row)].holder.frames));
            });

    auto* split = new QSplitter(Qt::Vertical);
    split->addWidget(table_);
    split->addWidget(flamePanel);
    split->setSizes({220, 420});
    empty_ = new QLabel(tr("No lock holders in this selection. Record with --lock-owner to name the owner task "
                           "of contended mutexes and rwsems and where it was, or with --holder-stacks for "
                           "spinlock holders."));
    empty_->setWordWrap(true);
    empty_->setAlignment(Qt::AlignTop | Qt::AlignLeft);
    empty_->setMargin(8);
    stack_ = new QStackedWidget;
    stack_->addWidget(split);
    stack_->addWidget(empty_);
    auto* layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addWidget(stack_);
}

void HoldersView::show(std::shared_ptr<const Capture> capture, int lockIndex)
{
    const Lock* lock = capture && lockIndex >= 0 ? &capture->locks.at(static_cast<size_t>(lockIndex)) : nullptr;
    flame_->setData(capture ? flameFromCallTree(
                        std::make_shared<const CallTree>(holderCallTree(*capture, lock)), FlameWeight::Wait)
                            : FlameData {});
    model_->setCapture(std::move(capture), lockIndex);
    table_->setColumnHidden(HolderTableModel::Lock, lockIndex >= 0);
    table_->resizeColumnsToContents();
    stack_->setCurrentWidget(model_->rowCount() > 0 ? stack_->widget(0) : empty_);
}

bool HoldersView::emptyShown() const noexcept
{
    return stack_->currentWidget() == empty_;
}

} // namespace lockscope::gui
