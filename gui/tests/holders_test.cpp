// SPDX-License-Identifier: GPL-2.0-or-later
// The Holders tab on a real `record --lock-owner` capture (the owners
// fixture: owner-workload held a pipe mutex and a memfd's i_rwsem on
// purpose): the owner tasks, the wait charged to them, and where they were
// as a flame graph, for one lock and for all.
#include <QLabel>
#include <QSortFilterProxyModel>
#include <QTabWidget>
#include <QTableView>
#include <QTest>

#include "app/captureloader.h"
#include "app/capturepage.h"
#include "app/comparepage.h"
#include "app/flamegraphwidget.h"
#include "app/holdersview.h"
#include "lockscope/capture/io.h"
#include "model/deltatablemodel.h"
#include "model/holdermodel.h"
#include "model/roles.h"
#include "model/units.h"

using namespace lockscope;
using namespace lockscope::gui;

namespace {
int lockIndex(const Capture& c, const std::string& key)
{
    for (size_t i = 0; i < c.locks.size(); ++i)
        if (c.locks[i].key == key)
            return static_cast<int>(i);
    return -1;
}

const Holder& onlyHolder(const Lock& l)
{
    const Holder* found = nullptr;
    for (const auto& s : l.sites)
        for (const auto& h : s.holders) {
            if (found)
                qFatal("more than one holder of %s", l.key.c_str());
            found = &h;
        }
    if (!found)
        qFatal("no holder of %s", l.key.c_str());
    return *found;
}

// The node under root whose function is `name`, searched depth first.
int findNode(const FlameData& d, const QString& name)
{
    for (size_t i = 1; i < d.size(); ++i)
        if (d.function(static_cast<uint32_t>(i)) == name)
            return static_cast<int>(i);
    return -1;
}
} // namespace

class TestHolders : public QObject {
    Q_OBJECT
    std::shared_ptr<const Capture> capture_;

private slots:
    void initTestCase()
    {
        capture_ = std::make_shared<const Capture>(readCapture(LOCKSCOPE_OWNERS_FIXTURE));
    }

    void oneLockNamesItsOwnerAndWhereItWas()
    {
        CapturePage page;
        page.setCapture(capture_);
        int tab = -1;
        for (int i = 0; i < page.tabs()->count(); ++i)
            if (page.tabs()->tabText(i) == QStringLiteral("Holders"))
                tab = i;
        QVERIFY2(tab >= 0, "no Holders tab");

        const int pipe = lockIndex(*capture_, "mutex@anon_pipe_write");
        QVERIFY(pipe >= 0);
        const Holder& owner = onlyHolder(capture_->locks[static_cast<size_t>(pipe)]);
        QVERIFY(owner.owner_tid);
        page.selectLock(pipe);
        HoldersView* view = page.holdersView();
        QVERIFY(!view->emptyShown());
        HolderTableModel* m = view->model();
        QCOMPARE(m->rowCount(), 1);
        auto cell = [m](int col) { return m->index(0, col).data().toString(); };
        QCOMPARE(cell(HolderTableModel::Owner), QStringLiteral("ls-owner"));
        QCOMPARE(cell(HolderTableModel::Tid), QString::number(*owner.owner_tid));
        QCOMPARE(cell(HolderTableModel::Waits), formatCount(owner.count));
        QCOMPARE(cell(HolderTableModel::WaitCharged), formatNs(owner.wait_ns));
        QCOMPARE(cell(HolderTableModel::WaitShare), formatPercent(1.0)); // the lock's only wait
        QVERIFY2(cell(HolderTableModel::Path).startsWith(QStringLiteral("handle_userfault ← ")),
                 qPrintable(cell(HolderTableModel::Path)));
        QVERIFY(cell(HolderTableModel::Path).contains(QStringLiteral("anon_pipe_write")));
        QVERIFY(view->table()->isColumnHidden(HolderTableModel::Lock));

        // The flame graph of where the owner was: one stack, all of the charged wait.
        const FlameData& d = view->flameGraph()->data();
        QCOMPARE(d.value(0), double(owner.wait_ns));
        const int leaf = findNode(d, QStringLiteral("handle_userfault"));
        QVERIFY(leaf > 0);
        QVERIFY2(d.children(static_cast<uint32_t>(leaf)).empty(), "the innermost frame is at the bottom");
        QCOMPARE(d.value(static_cast<uint32_t>(leaf)), double(owner.wait_ns));
        QVERIFY(findNode(d, QStringLiteral("anon_pipe_write")) > 0);
        QVERIFY2(findNode(d, QStringLiteral("shmem_file_write_iter")) < 0, "the other lock's owner is not in it");

        page.tabs()->setCurrentIndex(tab);
        page.resize(1100, 800);
        page.show();
        QVERIFY(QTest::qWaitForWindowExposed(&page));
        QVERIFY(view->flameGraph()->describe(static_cast<uint32_t>(leaf)).contains(QStringLiteral("handle_userfault")));
    }

    // Every lock's holders: selecting an owner's row zooms the flame graph to
    // where that owner was (its innermost frame), the other owner out of view.
    void selectingAHolderZoomsTheFlameGraphToItsPath()
    {
        CapturePage page;
        page.setCapture(capture_);
        HoldersView* view = page.holdersView();
        HolderTableModel* m = view->model();
        QVERIFY(m->rowCount() >= 2);
        const FlameData& d = view->flameGraph()->data();
        QCOMPARE(view->flameGraph()->zoomNode(), 0u);
        for (int row = 0; row < m->rowCount(); ++row) {
            const QModelIndex viewIndex = view->table()->model()->index(row, 0);
            view->table()->setCurrentIndex(viewIndex);
            const auto& holder =
                m->rows()[static_cast<size_t>(qobject_cast<const QSortFilterProxyModel*>(view->table()->model())
                                                  ->mapToSource(viewIndex)
                                                  .row())]
                    .holder;
            const uint32_t zoom = view->flameGraph()->zoomNode();
            QVERIFY2(zoom > 0, "selecting a holder did not zoom");
            QCOMPARE(d.function(zoom), QStringLiteral("handle_userfault")); // the path's innermost frame
            // Walk up: the zoomed node's ancestors are the row's path, outermost first.
            std::vector<std::string> up;
            for (uint32_t n = zoom; n != 0; n = d.parent(n))
                up.push_back(d.function(n).toStdString());
            QCOMPARE(up.size(), holder.frames.size());
            QVERIFY(holder.frames.back().rfind("handle_userfault", 0) == 0);
        }
        // The two owners slept under different writes: their zooms differ.
        view->table()->setCurrentIndex(view->table()->model()->index(0, 0));
        const uint32_t first = view->flameGraph()->zoomNode();
        view->table()->setCurrentIndex(view->table()->model()->index(1, 0));
        QVERIFY(view->flameGraph()->zoomNode() != first);
    }

    // The compare page's Holders tab: the selected lock's owners on each side,
    // here before (the fixture) and after (the same capture, the pipe's owner gone).
    void comparePageShowsEachSidesHoldersOfTheSelectedLock()
    {
        Capture after = *capture_;
        const int pipe = lockIndex(after, "mutex@anon_pipe_write");
        QVERIFY(pipe >= 0);
        for (auto& s : after.locks[static_cast<size_t>(pipe)].sites)
            s.holders.clear();
        const auto afterPtr = std::make_shared<const Capture>(std::move(after));
        auto cmp = std::make_shared<const reports::Comparison>(reports::compare(*capture_, *afterPtr));
        ComparePage page;
        page.setComparison(cmp, capture_, afterPtr);
        int row = -1;
        for (size_t i = 0; i < cmp->locks.size(); ++i)
            if (cmp->locks[i].key == "mutex@anon_pipe_write")
                row = static_cast<int>(i);
        QVERIFY(row >= 0);
        page.selectLock(row);
        HolderTableModel* before = page.beforeHolders()->model();
        QCOMPARE(before->rowCount(), 1);
        QCOMPARE(before->index(0, HolderTableModel::Owner).data().toString(), QStringLiteral("ls-owner"));
        QVERIFY(page.afterHolders()->emptyShown());
        // No lock selected: every lock's holders on each side (the rwsem's owner is still there after).
        page.selectLock(-1);
        QCOMPARE(page.beforeHolders()->model()->rowCount(), 2);
        QCOMPARE(page.afterHolders()->model()->rowCount(), 1);
    }

    // A lock the comparison read under another of its callers' keys (the
    // after side keyed the pipe's mutex by its second caller): the after
    // side's holders are still that lock's.
    void comparePageFindsALockKeyedByAnotherCaller()
    {
        // Both sides: the pipe's mutex also waited on from a second caller.
        Capture before = *capture_;
        const int pipe = lockIndex(before, "mutex@anon_pipe_write");
        QVERIFY(pipe >= 0);
        Lock& lock = before.locks[static_cast<size_t>(pipe)];
        const Stack* first = before.findStack(lock.sites.front().stack_id);
        QVERIFY(first && !first->frames.empty());
        Stack other = *first;
        other.id = 0;
        for (const auto& s : before.stacks)
            other.id = std::max(other.id, s.id + 1);
        other.frames.front().function = "pipe_write_other";
        LockSite site = lock.sites.front();
        site.stack_id = other.id;
        site.holders.clear();
        lock.wait.merge(site.wait);
        lock.hold.merge(site.hold);
        lock.sites.push_back(site);
        before.stacks.push_back(other);
        Capture after = before;
        after.locks[static_cast<size_t>(pipe)].key = "mutex@pipe_write_other";

        const auto b = std::make_shared<const Capture>(std::move(before));
        const auto a = std::make_shared<const Capture>(std::move(after));
        auto cmp = std::make_shared<const reports::Comparison>(reports::compare(*b, *a));
        int row = -1;
        for (size_t i = 0; i < cmp->locks.size(); ++i)
            if (cmp->locks[i].key == "mutex@anon_pipe_write")
                row = static_cast<int>(i);
        QVERIFY(row >= 0);
        QCOMPARE(cmp->locks[static_cast<size_t>(row)].also_keyed, std::vector<std::string>{"mutex@pipe_write_other"});
        ComparePage page;
        page.setComparison(cmp, b, a);
        page.selectLock(row);
        QCOMPARE(page.beforeHolders()->model()->rowCount(), 1);
        QCOMPARE(page.afterHolders()->model()->rowCount(), 1);
        QCOMPARE(page.afterHolders()->model()->index(0, HolderTableModel::Owner).data().toString(),
                 QStringLiteral("ls-owner"));
        DeltaTableModel table;
        table.setComparison(cmp);
        const QString tip = table.index(row, DeltaTableModel::Key).data(Qt::ToolTipRole).toString();
        QVERIFY2(tip.contains(QStringLiteral("mutex@pipe_write_other")), qPrintable(tip));
    }

    void allLocksListEveryOwnerMostWaitFirst()
    {
        CapturePage page;
        page.setCapture(capture_);
        HolderTableModel* m = page.holdersView()->model();
        const int rwsem = lockIndex(*capture_, "rwsem@shmem_file_write_iter");
        const int pipe = lockIndex(*capture_, "mutex@anon_pipe_write");
        QVERIFY(rwsem >= 0 && pipe >= 0);
        const Holder& a = onlyHolder(capture_->locks[static_cast<size_t>(rwsem)]);
        const Holder& b = onlyHolder(capture_->locks[static_cast<size_t>(pipe)]);
        QVERIFY2(a.owner_tid && b.owner_tid && *a.owner_tid != *b.owner_tid, "two runs of the workload");
        QCOMPARE(m->rowCount(), 2);
        const bool rwsemFirst = a.wait_ns >= b.wait_ns;
        QCOMPARE(m->index(0, HolderTableModel::Lock).data().toString(),
                 QString::fromStdString(rwsemFirst ? "rwsem@shmem_file_write_iter" : "mutex@anon_pipe_write"));
        QCOMPARE(m->index(0, 0).data(LockIndexRole).toInt(), rwsemFirst ? rwsem : pipe);
        QCOMPARE(m->index(rwsemFirst ? 0 : 1, HolderTableModel::Tid).data().toString(), QString::number(*a.owner_tid));
        QVERIFY(!page.holdersView()->table()->isColumnHidden(HolderTableModel::Lock));
        const FlameData& d = page.holdersView()->flameGraph()->data();
        QCOMPARE(d.value(0), double(a.wait_ns + b.wait_ns));
        QVERIFY(findNode(d, QStringLiteral("shmem_file_write_iter")) > 0 ||
                findNode(d, QStringLiteral("generic_perform_write")) > 0);

        // A lock nobody was seen holding says how to record holders instead.
        const int spin = lockIndex(*capture_, "spinlock@__schedule");
        QVERIFY(spin >= 0);
        page.selectLock(spin);
        QVERIFY(page.holdersView()->emptyShown());
        QCOMPARE(m->rowCount(), 0);
        QVERIFY(page.holdersView()->flameGraph()->data().drawsNothing());
    }
};

QTEST_MAIN(TestHolders)
#include "holders_test.moc"
