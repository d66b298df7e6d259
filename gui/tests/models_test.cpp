// SPDX-License-Identifier: GPL-2.0-or-later
// Item models and flame-graph data over captures built in code. Every model
// gets a QAbstractItemModelTester before its data is set, so Qt checks the
// model's invariants through the reset and every query.
#include <QAbstractItemModelTester>
#include <QColor>
#include <QSortFilterProxyModel>
#include <QTest>

#include "lockscope/capture/io.h"
#include "lockscope/reports/compare.h"
#include "model/calltreemodel.h"
#include "model/deltatablemodel.h"
#include "model/flamedata.h"
#include "model/latencydeltamodel.h"
#include "model/latencytablemodel.h"
#include "model/locktablemodel.h"
#include "model/roles.h"
#include "model/units.h"
#include "testcaptures.h"

using namespace lockscope;
using namespace lockscope::gui;
using namespace lockscope::gui::test;

namespace {
// Indented "function=count" lines, children in model order, as Hotspot's tests print trees.
void printTree(const QAbstractItemModel& m, const QModelIndex& parent, int depth, QStringList& out)
{
    for (int r = 0; r < m.rowCount(parent); ++r) {
        const QModelIndex idx = m.index(r, 0, parent);
        const auto count = m.index(r, CallTreeTraits::Count, parent).data(SortRole).toULongLong();
        out << QString(depth, QLatin1Char(' ')) + idx.data().toString() + QLatin1Char('=') + QString::number(count);
        printTree(m, idx, depth + 1, out);
    }
}

QStringList printTree(const QAbstractItemModel& m)
{
    QStringList out;
    printTree(m, {}, 0, out);
    return out;
}

Capture foldedCapture()
{
    Capture c;
    c.stacks = {foldedStack(1, "A;B;C"), foldedStack(2, "A;B;D"), foldedStack(3, "A;E")};
    c.locks.push_back(lockOf("l", "spinlock", {site(1, 100, 5), site(2, 100, 3), site(3, 100, 2)}));
    return c;
}
} // namespace

class TestModels : public QObject {
    Q_OBJECT
private slots:
    // A name that looks like HTML is shown as written: Qt renders tooltips
    // that look like rich text as rich text.
    void tooltipsShowNamesAsPlainText()
    {
        Capture c;
        c.stacks = {foldedStack(1, "<img src=x>;<b>f</b>")};
        c.locks.push_back(lockOf("<b>lock</b>", "spin<i>", {site(1, 100, 5)}));
        LockTableModel model;
        model.setCapture(std::make_shared<const Capture>(c));
        const QString tip = model.index(0, LockTableModel::Key).data(Qt::ToolTipRole).toString();
        QVERIFY2(tip.contains(QStringLiteral("&lt;b&gt;lock&lt;/b&gt;")), qPrintable(tip));
        QVERIFY2(!tip.contains(QStringLiteral("<b>lock")), qPrintable(tip));
        QCOMPARE(model.index(0, LockTableModel::Key).data().toString(), QStringLiteral("<b>lock</b>"));
        QCOMPARE(plainToolTip(QStringLiteral("a<b>\nc")).contains(QStringLiteral("&lt;b&gt;")), true);
    }
    // record --lock-names / --per-cgroup: the name beside the key, both in the tooltip.
    void lockRowShowsNameAndCgroup()
    {
        Capture c;
        c.stacks = {foldedStack(1, "f")};
        c.locks.push_back(lockOf("rwsem@vm_mmap_pgoff#/ls/a", "rwsem", {site(1, 100, 5)}));
        c.locks[0].name = "mmap_lock";
        c.locks[0].cgroup = "/ls/a";
        LockTableModel model;
        model.setCapture(std::make_shared<const Capture>(c));
        QCOMPARE(model.index(0, LockTableModel::Key).data().toString(),
                 QStringLiteral("rwsem@vm_mmap_pgoff#/ls/a  [mmap_lock]"));
        const QString tip = model.index(0, LockTableModel::Key).data(Qt::ToolTipRole).toString();
        QVERIFY2(tip.contains(QStringLiteral("<br>\nname")) && tip.contains(QStringLiteral("mmap_lock<br>")),
                 qPrintable(tip));
        QVERIFY2(tip.contains(QStringLiteral("<br>\ncgroup")) && tip.contains(QStringLiteral("/ls/a</p>")),
                 qPrintable(tip));
        // A global lock keyed by its symbol: the name would only repeat the key.
        c.locks[0].key = c.locks[0].name = "rtnl_mutex";
        model.setCapture(std::make_shared<const Capture>(c));
        QCOMPARE(model.index(0, LockTableModel::Key).data().toString(), QStringLiteral("rtnl_mutex"));
    }
    void lockTable()
    {
        LockTableModel model;
        QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
        QCOMPARE(model.rowCount(), 0);
        auto capture = std::make_shared<const Capture>(semCapture("baseline", 1.0));
        model.setCapture(capture);
        QCOMPARE(model.rowCount(), 3);
        QCOMPARE(model.columnCount(), int(LockTableModel::ColumnCount));
        QCOMPARE(model.index(0, LockTableModel::Key).data().toString(), QStringLiteral("spinlock@sem_lock"));
        QCOMPARE(model.index(1, LockTableModel::Contentions).data(SortRole).toULongLong(), 3000ull);
        QCOMPARE(model.index(0, LockTableModel::WaitMax).data(SortRole).toULongLong(), 4000ull);
        QVERIFY(model.headerData(LockTableModel::WaitP99, Qt::Horizontal, Qt::ToolTipRole).toString().contains(
            QStringLiteral("percentile")));

        // Sorting uses the raw number, filtering the key.
        QSortFilterProxyModel proxy;
        proxy.setSourceModel(&model);
        proxy.setSortRole(SortRole);
        proxy.sort(LockTableModel::WaitAvg, Qt::DescendingOrder);
        QCOMPARE(proxy.index(0, LockTableModel::Key).data().toString(), QStringLiteral("mutex@ipcget"));
        QCOMPARE(proxy.index(0, LockTableModel::WaitAvg).data().toString(), QStringLiteral("70.00 us"));
        proxy.setFilterFixedString(QStringLiteral("rename"));
        QCOMPARE(proxy.rowCount(), 1);

        // Shares of total wait add up to one.
        double sum = 0;
        for (int r = 0; r < model.rowCount(); ++r)
            sum += model.index(r, LockTableModel::WaitShare).data(SortRole).toDouble();
        QCOMPARE(sum, 1.0);

        model.setCapture(nullptr);
        QCOMPARE(model.rowCount(), 0);
    }
    // Hold and acquire cells read as the reports' lock tables write them;
    // a lock never held, or without slow acquisitions, shows no time
    // rather than "0 ns", and sorts as zero.
    void lockTableHoldAndAcquireCells()
    {
        Capture c = semCapture("baseline", 1.0);
        c.locks[1].acquire.add(2000, 5); // rename_lock: 3000 holds of 1.2 us
        LockTableModel model;
        QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
        model.setCapture(std::make_shared<const Capture>(c));
        auto cell = [&](int row, int column) { return model.index(row, column).data().toString(); };
        QCOMPARE(cell(1, LockTableModel::HoldCount), QStringLiteral("3\u202f000"));
        QCOMPARE(cell(1, LockTableModel::HoldTotal), QStringLiteral("3.60 ms"));
        QCOMPARE(cell(1, LockTableModel::HoldAvg), QStringLiteral("1.20 us"));
        QCOMPARE(cell(1, LockTableModel::HoldMax), QStringLiteral("1.20 us"));
        QCOMPARE(cell(1, LockTableModel::AcquireCount), QStringLiteral("5"));
        QCOMPARE(cell(1, LockTableModel::AcquireP99), QStringLiteral("2.00 us"));
        QCOMPARE(model.index(1, LockTableModel::HoldTotal).data(SortRole).toULongLong(), 3600000ull);

        const int neverHeld = 2; // mutex@ipcget
        QCOMPARE(cell(neverHeld, LockTableModel::HoldCount), QStringLiteral("0"));
        for (int column : {int(LockTableModel::HoldTotal), int(LockTableModel::HoldAvg), int(LockTableModel::HoldMax),
                           int(LockTableModel::AcquireP99)}) {
            QCOMPARE(cell(neverHeld, column), QStringLiteral("\u2013"));
            QCOMPARE(model.index(neverHeld, column).data(SortRole).toULongLong(), 0ull);
        }
    }

    void callTreeTopDown()
    {
        CallTreeModel model;
        QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
        const Capture c = foldedCapture();
        model.setTree(std::make_shared<const CallTree>(CallTree::forCapture(c, TreeDirection::TopDown)));
        const QStringList expected = {QStringLiteral("A=10"), QStringLiteral(" B=8"), QStringLiteral("  C=5"),
                                      QStringLiteral("  D=3"), QStringLiteral(" E=2")};
        QCOMPARE(printTree(model), expected);
        const QModelIndex a = model.index(0, CallTreeTraits::WaitPercent);
        QCOMPARE(a.data().toString(), QStringLiteral("100.0 %"));
        const QModelIndex c0 = model.index(0, 0, model.index(0, 0, model.index(0, 0)));
        QCOMPARE(c0.data().toString(), QStringLiteral("C"));
        QCOMPARE(model.parent(c0).data().toString(), QStringLiteral("B"));
        QCOMPARE(model.index(0, CallTreeTraits::SelfWait, c0.parent()).data(SortRole).toULongLong(), 500ull);
    }

    void callTreeBottomUp()
    {
        CallTreeModel model;
        QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
        const Capture c = foldedCapture();
        model.setTree(std::make_shared<const CallTree>(CallTree::forCapture(c, TreeDirection::BottomUp)));
        const QStringList expected = {QStringLiteral("C=5"),  QStringLiteral(" B=5"), QStringLiteral("  A=5"),
                                      QStringLiteral("D=3"),  QStringLiteral(" B=3"), QStringLiteral("  A=3"),
                                      QStringLiteral("E=2"),  QStringLiteral(" A=2")};
        QCOMPARE(printTree(model), expected);

        // A recursive filter keeps the ancestors of matches.
        QSortFilterProxyModel proxy;
        proxy.setRecursiveFilteringEnabled(true);
        proxy.setSourceModel(&model);
        QAbstractItemModelTester proxyTester(&proxy, QAbstractItemModelTester::FailureReportingMode::QtTest);
        proxy.setFilterFixedString(QStringLiteral("E"));
        QCOMPARE(proxy.rowCount(), 1);
        QCOMPARE(proxy.index(0, 0).data().toString(), QStringLiteral("E"));
    }

    void callTreeReplaced()
    {
        CallTreeModel model;
        QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
        const Capture c = semCapture("baseline", 1.0);
        model.setTree(std::make_shared<const CallTree>(CallTree::forLock(c, c.locks[0], TreeDirection::TopDown)));
        QCOMPARE(model.rowCount(), 1);
        model.setTree(std::make_shared<const CallTree>(CallTree::forLock(c, c.locks[1], TreeDirection::TopDown)));
        QCOMPARE(model.index(0, 0).data().toString(), QStringLiteral("entry_SYSCALL_64"));
        model.setTree(nullptr);
        QCOMPARE(model.rowCount(), 0);
    }

    void deltaTable()
    {
        DeltaTableModel model;
        QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
        const Capture before = semCapture("baseline", 1.0);
        Capture after = semCapture("patched", 0.1);
        after.locks.erase(after.locks.begin() + 2); // mutex@ipcget gone
        auto cmp = std::make_shared<const reports::Comparison>(reports::compare(before, after));
        model.setComparison(cmp);
        QCOMPARE(model.rowCount(), static_cast<int>(cmp->locks.size()));
        int sem = -1, gone = -1;
        for (int r = 0; r < model.rowCount(); ++r) {
            const QString key = model.index(r, DeltaTableModel::Key).data().toString();
            if (key == QStringLiteral("spinlock@sem_lock"))
                sem = r;
            if (key == QStringLiteral("mutex@ipcget"))
                gone = r;
        }
        QVERIFY(sem >= 0 && gone >= 0);
        const auto& l = cmp->locks[static_cast<size_t>(sem)];
        // The model shows the engine's figures, not its own.
        QCOMPARE(model.index(sem, DeltaTableModel::WaitPct).data(SortRole).toDouble(), *l.total_wait_ns.pct());
        QCOMPARE(model.index(sem, DeltaTableModel::WaitDelta).data(SortRole).toDouble(), l.total_wait_ns.delta());
        // One run a side: the event test's p, no verdict and no tint (reports' judgeEvents).
        QCOMPARE(l.judgement.verdict, reports::Verdict::NoVerdict);
        QCOMPARE(model.index(sem, DeltaTableModel::Outcome).data().toString(),
                 DeltaTableModel::verdictLabel(reports::Verdict::NoVerdict));
        // The p shown is the verdict's own test's, and the tooltip names that test.
        QCOMPARE(model.index(sem, DeltaTableModel::PValue).data(SortRole).toDouble(), *l.judgement.p_value);
        // A p that underflowed to 0 (a 10x change over 10^6 events) is not shown as a certainty.
        QCOMPARE(*l.judgement.p_value, 0.0);
        QCOMPARE(model.index(sem, DeltaTableModel::PValue).data().toString(), QStringLiteral("<1e-300"));
        QVERIFY(model.index(sem, DeltaTableModel::Outcome).data(Qt::ToolTipRole).toString().contains(
            QStringLiteral("p = <1e-300")));
        QCOMPARE(model.index(sem, DeltaTableModel::Test).data().toString(),
                 QString::fromUtf8(reports::toString(l.judgement.test)));
        QVERIFY(model.index(sem, DeltaTableModel::Outcome).data(Qt::ToolTipRole).toString().contains(
            QString::fromUtf8(reports::toString(l.judgement.test))));
        QCOMPARE(model.index(sem, DeltaTableModel::Figure).data().toString(), QStringLiteral("total wait/s"));
        QVERIFY(!model.index(sem, 0).data(Qt::BackgroundRole).isValid());
        QVERIFY(model.index(sem, DeltaTableModel::PValue).data(Qt::ToolTipRole).toString().contains(QStringLiteral("χ²")));
        QCOMPARE(model.index(gone, DeltaTableModel::Outcome).data().toString(), QStringLiteral("only before"));
        QVERIFY(model.index(sem, DeltaTableModel::WaitDelta).data().toString().startsWith(QStringLiteral("−")));
        for (int c = 0; c < model.columnCount(); ++c)
            QVERIFY(!model.headerData(c, Qt::Horizontal, Qt::ToolTipRole).toString().isEmpty());
        model.setComparison(nullptr);
        QCOMPARE(model.rowCount(), 0);
    }

    void deltaTableRunSetsShowEveryJudgedFigure()
    {
        // Three runs a side; twice the waits and holds three times longer after: the row rests on
        // total hold/s (the smaller p), and the other changed figures are named beside it, as every report shows.
        auto runs = [](uint64_t holdNs) {
            std::vector<Capture> v;
            for (uint64_t r = 0; r < 3; ++r) {
                Capture c;
                c.meta.duration_s = 10.0;
                c.stats.events = 100000;
                c.stacks.push_back(foldedStack(1, "entry_SYSCALL_64;do_timer_gettime;_raw_spin_lock"));
                const uint64_t waits = (20000 + 300 * r) * (holdNs > 1000 ? 2 : 1);
                c.locks.push_back(lockOf("spinlock@both", "spinlock", {site(1, 2000, waits, holdNs, 50000 + 500 * r)}));
                v.push_back(c);
            }
            return v;
        };
        DeltaTableModel model;
        QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
        auto cmp = std::make_shared<const reports::Comparison>(reports::compareSets(runs(1000), runs(3000)));
        model.setComparison(cmp);
        QCOMPARE(model.rowCount(), 1);
        const auto& l = cmp->locks.front();
        QCOMPARE(model.index(0, DeltaTableModel::Figure).data().toString(), QStringLiteral("total hold/s"));
        QCOMPARE(model.index(0, DeltaTableModel::Outcome).data().toString(),
                 DeltaTableModel::verdictLabel(reports::Verdict::Regressed));
        QCOMPARE(l.judgement.verdict, reports::Verdict::Regressed);
        const QString others = model.index(0, DeltaTableModel::OtherChanges).data().toString();
        QVERIFY2(others.contains(QStringLiteral("contentions/s +100.0 %: more (worse)")), qPrintable(others));
        QVERIFY2(others.contains(QStringLiteral("total wait/s +100.0 %: more (worse)")), qPrintable(others));
        QVERIFY(!others.contains(QStringLiteral("mean hold")));
        QCOMPARE(model.index(0, DeltaTableModel::OtherChanges).data(SortRole).toInt(),
                 static_cast<int>(reports::otherChangedFigures(l).size()));
        QVERIFY(model.index(0, DeltaTableModel::OtherChanges).data(Qt::ToolTipRole).toString().contains(
            QStringLiteral("on total wait/s")));
        // Counts are means per run: 60900 waits in three runs before, 121800 after.
        QCOMPARE(model.index(0, DeltaTableModel::ContentionsBefore).data().toString(), formatCount(20300));
    }

    void deltaTableCountsAreMeansPerRun()
    {
        // One wait in three runs after, none before: 0.33 a run, not 0 beside "only after".
        auto runs = [](uint64_t waitsInFirst) {
            std::vector<Capture> v;
            for (uint64_t r = 0; r < 3; ++r) {
                Capture c;
                c.meta.duration_s = 10.0;
                c.stats.events = 100000;
                c.stacks.push_back(foldedStack(1, "entry_SYSCALL_64;do_exit;_raw_spin_lock"));
                c.stacks.push_back(foldedStack(2, "entry_SYSCALL_64;do_semtimedop;_raw_spin_lock"));
                c.locks.push_back(lockOf("spinlock@sem", "spinlock", {site(2, 2000, 5000)}));
                if (r == 0 && waitsInFirst)
                    c.locks.push_back(lockOf("spinlock@do_exit", "spinlock", {site(1, 3000, waitsInFirst)}));
                v.push_back(c);
            }
            return v;
        };
        DeltaTableModel model;
        auto cmp = std::make_shared<const reports::Comparison>(reports::compareSets(runs(0), runs(1)));
        model.setComparison(cmp);
        int rare = -1;
        for (int r = 0; r < model.rowCount(); ++r)
            if (model.index(r, DeltaTableModel::Key).data().toString() == QStringLiteral("spinlock@do_exit"))
                rare = r;
        QVERIFY(rare >= 0);
        QCOMPARE(model.index(rare, DeltaTableModel::ContentionsBefore).data().toString(), QStringLiteral("0"));
        QCOMPARE(model.index(rare, DeltaTableModel::ContentionsAfter).data().toString(), QStringLiteral("0.33"));
        QCOMPARE(model.index(rare, DeltaTableModel::ContentionsAfter).data(SortRole).toDouble(), 1.0 / 3.0);
    }

    void deltaTableSeed04RunsShowTheReportsVerdicts()
    {
        // The real seed-04 run sets (reports/tests/fixtures/seed04-3v3): every row shows the engine's
        // verdict on the figure it rests on, as the reports do (reports.Seed04Runs.*).
        auto side = [](const char* name) {
            std::vector<Capture> v;
            for (int k = 1; k <= 3; ++k)
                v.push_back(readCapture(std::string(LOCKSCOPE_SEED04_RUNS) + "/" + name + "-" + std::to_string(k) +
                                        ".lockscope.json"));
            return v;
        };
        DeltaTableModel model;
        QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
        auto cmp = std::make_shared<const reports::Comparison>(reports::compareSets(side("base"), side("p4")));
        model.setComparison(cmp);
        bool sawHash = false, sawTimer = false;
        for (int r = 0; r < model.rowCount(); ++r) {
            const auto& l = cmp->locks[static_cast<size_t>(r)];
            QCOMPARE(model.index(r, DeltaTableModel::Outcome).data().toString(),
                     DeltaTableModel::verdictLabel(l.judgement.verdict));
            QCOMPARE(model.index(r, DeltaTableModel::Figure).data().toString(), QString::fromStdString(l.judgement.basis));
            if (l.key == "hash_lock") {
                sawHash = true;
                QCOMPARE(l.judgement.verdict, reports::Verdict::Regressed);
                QVERIFY(model.index(r, DeltaTableModel::Test).data().toString() != QStringLiteral("–"));
                QVERIFY(!model.index(r, DeltaTableModel::OtherChanges).data().toString().isEmpty());
            }
            if (l.key == "spinlock@__lock_timer") {
                sawTimer = true;
                QCOMPARE(model.index(r, DeltaTableModel::Figure).data().toString(), QStringLiteral("hold time/op"));
            }
        }
        QVERIFY(sawHash && sawTimer);
    }

    void deltaTableHoldOnly()
    {
        // Captures with holds and no waits: the wait columns carry no data, each
        // row is judged on total hold/s and shows the hold test's p-value.
        auto holdsOnly = [](double scale) {
            Capture c = semCapture("baseline", scale);
            for (auto& l : c.locks) {
                l.wait = Log2Hist{};
                for (auto& s : l.sites)
                    s.wait = Log2Hist{};
            }
            return c;
        };
        DeltaTableModel model;
        auto cmp = std::make_shared<const reports::Comparison>(reports::compare(holdsOnly(1.0), holdsOnly(0.3)));
        model.setComparison(cmp);
        QVERIFY(!model.columnHasData(DeltaTableModel::WaitBefore));
        QVERIFY(!model.columnHasData(DeltaTableModel::P99WaitPct));
        QVERIFY(model.columnHasData(DeltaTableModel::HoldBefore));
        for (int r = 0; r < model.rowCount(); ++r) {
            const auto& l = cmp->locks[static_cast<size_t>(r)];
            QCOMPARE(model.index(r, DeltaTableModel::Figure).data().toString(), QStringLiteral("total hold/s"));
            if (l.judgement.p_value) {
                QCOMPARE(*l.judgement.p_value, l.hold_test.p_value);
                QCOMPARE(model.index(r, DeltaTableModel::PValue).data(SortRole).toDouble(), l.hold_test.p_value);
            }
        }
    }

    void latencyTable()
    {
        LatencyTableModel model;
        QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
        QCOMPARE(model.rowCount(), 0);
        auto capture = std::make_shared<const Capture>(latencyCapture());
        model.setCapture(capture);
        QCOMPARE(model.rowCount(), 3);
        QCOMPARE(model.columnCount(), int(LatencyTableModel::ColumnCount));
        auto cell = [&](int row, int col, int role = Qt::DisplayRole) { return model.index(row, col).data(role); };

        // Syscalls first, in capture order, then functions.
        QCOMPARE(cell(0, LatencyTableModel::Kind).toString(), QStringLiteral("syscall"));
        QCOMPARE(cell(0, LatencyTableModel::Name).toString(), QStringLiteral("semtimedop"));
        QCOMPARE(cell(1, LatencyTableModel::Name).toString(), QStringLiteral("timer_gettime"));
        QCOMPARE(cell(2, LatencyTableModel::Kind).toString(), QStringLiteral("function"));
        QCOMPARE(cell(2, LatencyTableModel::Name).toString(), QStringLiteral("__lock_timer"));
        QCOMPARE(model.entry(2), &capture->functions[0]);
        QCOMPARE(model.entry(3), nullptr);

        // Sampled 1 in 16 with every call counted: the exact count, and the reports' wording.
        QCOMPARE(cell(0, LatencyTableModel::Calls, SortRole).toULongLong(), 50000ull);
        QCOMPARE(cell(0, LatencyTableModel::Calls).toString(), QStringLiteral("50\u202F000 (1 in 16 timed)"));
        QVERIFY(cell(0, LatencyTableModel::Calls, Qt::ToolTipRole).toString().contains(QStringLiteral("exactly")));
        QCOMPARE(cell(1, LatencyTableModel::Calls).toString(), QStringLiteral("800"));
        QCOMPARE(cell(2, LatencyTableModel::Calls, SortRole).toULongLong(), 710ull);
        QCOMPARE(cell(0, LatencyTableModel::Errors, SortRole).toULongLong(), 5ull);
        QCOMPARE(cell(1, LatencyTableModel::Errors, SortRole).toULongLong(), 0ull);

        QCOMPARE(cell(0, LatencyTableModel::Mean, SortRole).toULongLong(), 2205ull);
        QCOMPARE(cell(0, LatencyTableModel::Mean).toString(), QStringLiteral("2.21 us"));
        QCOMPARE(cell(2, LatencyTableModel::Mean, SortRole).toULongLong(), 218ull);
        QCOMPARE(cell(0, LatencyTableModel::Max, SortRole).toULongLong(), 64000ull);
        QCOMPARE(cell(0, LatencyTableModel::Max).toString(), QStringLiteral("64.00 us"));
        const Log2Hist& sem = capture->syscalls[0].latency;
        QCOMPARE(cell(0, LatencyTableModel::P50, SortRole).toULongLong(), qulonglong(sem.percentile(50)));
        QCOMPARE(cell(0, LatencyTableModel::P99, SortRole).toULongLong(), qulonglong(sem.percentile(99)));
        // 3000 of 3010 calls took 2 µs: both percentiles lie in its bucket.
        QCOMPARE(Log2Hist::bucketOf(cell(0, LatencyTableModel::P99, SortRole).toULongLong()), Log2Hist::bucketOf(2000));
        // 10 of __lock_timer's 710 calls took 5 µs (over 1 %): its p99 is in that bucket, its median is not.
        QCOMPARE(Log2Hist::bucketOf(cell(2, LatencyTableModel::P99, SortRole).toULongLong()), Log2Hist::bucketOf(5000));
        QCOMPARE(Log2Hist::bucketOf(cell(2, LatencyTableModel::P50, SortRole).toULongLong()), Log2Hist::bucketOf(150));
        for (int c = 0; c < model.columnCount(); ++c)
            QVERIFY(!model.headerData(c, Qt::Horizontal, Qt::ToolTipRole).toString().isEmpty());

        // Sampled without a count: estimated from the timed calls.
        Capture uncounted = latencyCapture();
        uncounted.syscalls[0].all_calls = 0;
        model.setCapture(std::make_shared<const Capture>(uncounted));
        QCOMPARE(cell(0, LatencyTableModel::Calls, SortRole).toULongLong(), 3010ull * 16);
        QVERIFY(cell(0, LatencyTableModel::Calls).toString().endsWith(QStringLiteral(" (1 in 16 timed)")));
        QVERIFY(cell(0, LatencyTableModel::Calls, Qt::ToolTipRole).toString().contains(QStringLiteral("Estimated")));

        model.setCapture(std::make_shared<const Capture>(semCapture("baseline", 1.0)));
        QCOMPARE(model.rowCount(), 0);
        model.setCapture(nullptr);
        QCOMPARE(model.rowCount(), 0);
    }

    void latencyTableSorting()
    {
        LatencyTableModel model;
        QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
        model.setCapture(std::make_shared<const Capture>(latencyCapture()));
        QSortFilterProxyModel proxy;
        proxy.setSourceModel(&model);
        proxy.setSortRole(SortRole);
        auto names = [&proxy] {
            QStringList out;
            for (int r = 0; r < proxy.rowCount(); ++r)
                out << proxy.index(r, LatencyTableModel::Name).data().toString();
            return out;
        };
        // By the raw number, not the text ("2.21 µs" < "300 ns" as strings).
        proxy.sort(LatencyTableModel::Mean, Qt::DescendingOrder);
        QCOMPARE(names(), (QStringList{QStringLiteral("semtimedop"), QStringLiteral("timer_gettime"),
                                       QStringLiteral("__lock_timer")}));
        proxy.sort(LatencyTableModel::Calls, Qt::AscendingOrder);
        QCOMPARE(names(), (QStringList{QStringLiteral("__lock_timer"), QStringLiteral("timer_gettime"),
                                       QStringLiteral("semtimedop")}));
        proxy.sort(LatencyTableModel::Max, Qt::DescendingOrder);
        QCOMPARE(names().front(), QStringLiteral("semtimedop"));
        QCOMPARE(names().back(), QStringLiteral("timer_gettime"));
        proxy.sort(LatencyTableModel::Kind, Qt::AscendingOrder);
        QCOMPARE(names().front(), QStringLiteral("__lock_timer"));
        // The entry a sorted row stands for.
        QCOMPARE(proxy.index(0, 0).data(EntryIndexRole).toInt(), 2);
    }

    void latencyDeltaTable()
    {
        LatencyDeltaModel model;
        QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
        Capture before = latencyCapture();
        Capture after = latencyCapture();
        after.syscalls[0].latency = {};
        after.syscalls[0].latency.add(1000, 3000); // semtimedop mean 2205 ns -> 1000 ns
        after.syscalls[0].all_calls = 52000;
        after.functions.clear();                   // __lock_timer gone
        auto cmp = std::make_shared<const reports::Comparison>(reports::compare(before, after));
        model.setComparison(cmp);
        QCOMPARE(model.rowCount(), static_cast<int>(cmp->syscalls.size() + cmp->functions.size()));
        QCOMPARE(model.rowCount(), 3);
        int sem = -1, timer = -1, gone = -1;
        for (int r = 0; r < model.rowCount(); ++r) {
            const QString name = model.index(r, LatencyDeltaModel::Name).data(SortRole).toString();
            (name == QStringLiteral("semtimedop") ? sem : name == QStringLiteral("timer_gettime") ? timer : gone) = r;
        }
        QVERIFY(sem >= 0 && timer >= 0 && gone >= 0);
        // Sampled on both sides (1 in 16): the name says so, as the reports do.
        QCOMPARE(model.index(sem, LatencyDeltaModel::Name).data().toString(),
                 QStringLiteral("semtimedop (1 in 16 timed)"));
        QCOMPARE(model.index(gone, LatencyDeltaModel::Name).data().toString(), QStringLiteral("__lock_timer"));
        QCOMPARE(model.index(gone, LatencyDeltaModel::Kind).data().toString(), QStringLiteral("function"));
        QCOMPARE(model.index(sem, LatencyDeltaModel::Kind).data().toString(), QStringLiteral("syscall"));

        // The engine's figures, matched by name.
        const reports::LatencyDelta& d = *model.row(sem);
        QCOMPARE(d.name, std::string("semtimedop"));
        QCOMPARE(model.index(sem, LatencyDeltaModel::CallsBefore).data(SortRole).toDouble(), 50000.0);
        QCOMPARE(model.index(sem, LatencyDeltaModel::CallsAfter).data(SortRole).toDouble(), 52000.0);
        QCOMPARE(model.index(sem, LatencyDeltaModel::MeanBefore).data(SortRole).toDouble(), 2205.0);
        QCOMPARE(model.index(sem, LatencyDeltaModel::MeanAfter).data(SortRole).toDouble(), 1000.0);
        QCOMPARE(model.index(sem, LatencyDeltaModel::P99Before).data(SortRole).toDouble(), d.p99_ns.before);
        QCOMPARE(model.index(sem, LatencyDeltaModel::P99After).data(SortRole).toDouble(), d.p99_ns.after);
        QCOMPARE(model.index(sem, LatencyDeltaModel::MeanRatio).data(SortRole).toDouble(), 1000.0 / 2205.0);
        QCOMPARE(model.index(sem, LatencyDeltaModel::MeanRatio).data().toString(), QStringLiteral("×0.45"));
        QCOMPARE(model.index(timer, LatencyDeltaModel::MeanRatio).data().toString(), QStringLiteral("×1.00"));
        QCOMPARE(model.index(sem, LatencyDeltaModel::Outcome).data().toString(),
                 DeltaTableModel::verdictLabel(d.avg_runs.judgement.verdict));
        QCOMPARE(d.avg_runs.judgement.verdict, reports::Verdict::NoVerdict); // one run a side
        QVERIFY(!model.index(sem, 0).data(Qt::BackgroundRole).isValid());

        // A side the entry is missing from reads "–", not zero.
        QCOMPARE(model.index(gone, LatencyDeltaModel::Outcome).data().toString(), QStringLiteral("only before"));
        QCOMPARE(model.index(gone, LatencyDeltaModel::MeanAfter).data().toString(), QStringLiteral("–"));
        QCOMPARE(model.index(gone, LatencyDeltaModel::MeanRatio).data().toString(), QStringLiteral("–"));
        QCOMPARE(model.index(gone, LatencyDeltaModel::CallsBefore).data(SortRole).toDouble(), 710.0);
        for (int c = 0; c < model.columnCount(); ++c)
            QVERIFY(!model.headerData(c, Qt::Horizontal, Qt::ToolTipRole).toString().isEmpty());

        QSortFilterProxyModel proxy;
        proxy.setSourceModel(&model);
        proxy.setSortRole(SortRole);
        proxy.sort(LatencyDeltaModel::MeanRatio, Qt::AscendingOrder);
        QCOMPARE(proxy.index(0, LatencyDeltaModel::Name).data(SortRole).toString(), QStringLiteral("__lock_timer"));
        QCOMPARE(proxy.index(1, LatencyDeltaModel::Name).data(SortRole).toString(), QStringLiteral("semtimedop"));

        model.setComparison(nullptr);
        QCOMPARE(model.rowCount(), 0);
    }

    void flameFromTree()
    {
        const Capture c = foldedCapture();
        const auto shared = std::make_shared<const CallTree>(CallTree::forCapture(c, TreeDirection::TopDown));
        const CallTree& tree = *shared;
        const FlameData f = flameFromCallTree(shared, FlameWeight::Count);
        QCOMPARE(f.value(0), 10.0);
        const uint32_t aId = f.children(0)[0];
        QCOMPARE(f.function(aId), QStringLiteral("A"));
        // Children are ordered by name, and their widths add up to the parent's.
        QCOMPARE(f.function(f.children(aId)[0]), QStringLiteral("B"));
        QCOMPARE(f.value(f.children(aId)[0]) + f.value(f.children(aId)[1]), f.value(aId));
        const FlameData w = flameFromCallTree(shared, FlameWeight::Wait);
        QCOMPARE(w.value(0), 1000.0);
        QVERIFY(!w.differential());
        QCOMPARE(w.tree.get(), &tree); // read, not copied
        // Each node names the tree's frame; a graph of one capture is all "after".
        QCOMPARE(w.function(0), QStringLiteral("all"));
        QCOMPARE(w.size(), tree.size());
        for (uint32_t id = 1; id < w.size(); ++id) {
            QCOMPARE(w.function(id), fromStd(tree.function(id)));
            QCOMPARE(w.module(id), fromStd(tree.module(id)));
            QCOMPARE(w.after(id), static_cast<double>(tree.node(id).total.wait_ns));
            QCOMPARE(w.before(id), 0.0);
        }
    }

    void flameSearch()
    {
        const Capture c = foldedCapture();
        const FlameData f = flameFromCallTree(
            std::make_shared<const CallTree>(CallTree::forCapture(c, TreeDirection::TopDown)),
            FlameWeight::Count);
        // "B" matches B only; C and D below it are not counted again.
        QCOMPARE(searchFlame(f, QStringLiteral("b")).coveredShare, 0.8);
        QCOMPARE(searchFlame(f, QStringLiteral("A")).coveredShare, 1.0);
        QCOMPARE(searchFlame(f, QStringLiteral("zzz")).coveredShare, 0.0);
        QCOMPARE(searchFlame(f, QString()).coveredShare, 0.0);
    }

    void flameDifferential()
    {
        const Capture before = semCapture("baseline", 1.0);
        const Capture after = semCapture("patched", 0.1);
        const auto comparison = std::make_shared<const reports::Comparison>(reports::compare(before, after));
        const reports::Comparison& cmp = *comparison;
        const auto tree = std::shared_ptr<const reports::DiffTree>(comparison, &comparison->tree);
        const FlameData after_w = flameFromDiffTree(tree, FlameWeight::Wait, false);
        const FlameData before_w = flameFromDiffTree(tree, FlameWeight::Wait, true);
        QVERIFY(after_w.differential());
        QCOMPARE(after_w.value(0), static_cast<double>(cmp.tree.nodes.front().after_wait_ns));
        QCOMPARE(before_w.value(0), static_cast<double>(cmp.tree.nodes.front().before_wait_ns));
        QVERIFY(after_w.value(0) < before_w.value(0));
        // Coloured by each node's own change: 10x less wait is -0.9, whatever else changed.
        const auto& root = cmp.tree.nodes.front();
        QCOMPARE(after_w.relativeChange(0),
                 (double(root.after_wait_ns) - double(root.before_wait_ns)) / double(root.before_wait_ns));
        for (uint32_t id = 0; id < after_w.size(); ++id)
            if (after_w.function(id) == QStringLiteral("do_semtimedop"))
                QVERIFY2(std::fabs(after_w.relativeChange(id) + 0.9) < 0.01,
                         qPrintable(QString::number(after_w.relativeChange(id))));
        for (uint32_t id = 0; id < after_w.size(); ++id)
            QVERIFY(after_w.relativeChange(id) >= -1.0 && after_w.relativeChange(id) <= 1.0);
        // Both sides and the frame of every node are the comparison tree's.
        QCOMPARE(after_w.size(), cmp.tree.nodes.size());
        for (uint32_t id = 1; id < after_w.size(); ++id) {
            const reports::DiffNode& n = cmp.tree.nodes[id];
            QCOMPARE(after_w.function(id), fromStd(cmp.tree.function(id)));
            QCOMPARE(after_w.module(id), fromStd(cmp.tree.module(id)));
            QCOMPARE(after_w.before(id), static_cast<double>(n.before_wait_ns));
            QCOMPARE(after_w.after(id), static_cast<double>(n.after_wait_ns));
            QCOMPARE(before_w.value(id), static_cast<double>(n.before_wait_ns));
            QCOMPARE(after_w.value(id), static_cast<double>(n.after_wait_ns));
        }
    }
};

QTEST_MAIN(TestModels)
#include "models_test.moc"
