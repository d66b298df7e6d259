// SPDX-License-Identifier: GPL-2.0-or-later
// The widgets and the main window on the offscreen platform: flame graph
// interaction, histogram modes, lock selection driving the views, loading
// (good and bad files), recent files and export.
#include <algorithm>

#include <QApplication>
#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QImage>
#include <QLabel>
#include <QMessageBox>
#include <QMimeData>
#include <QPushButton>
#include <QUrl>
#include <QSet>
#include <QSignalSpy>
#include <QStandardPaths>
#include <QSysInfo>
#include <QTabWidget>
#include <QTableView>
#include <QTemporaryDir>
#include <QTest>

#include "app/captureloader.h"
#include "app/capturepage.h"
#include "app/comparepage.h"
#include "app/flamegraphwidget.h"
#include "app/histogramchart.h"
#include "app/mainwindow.h"
#include "app/recorddialog.h"
#include "app/referencescaling.h"
#include "app/scalingview.h"
#include "app/summaryview.h"
#include "lockscope/capture/io.h"
#include "lockscope/reports/change_order.h"
#include "lockscope/reports/input.h"
#include "lockscope/reports/render.h"
#include "lockscope/scaling_format/scaling_io.h"
#include "model/calltreemodel.h"
#include "model/deltatablemodel.h"
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
int distinctColors(const QImage& img)
{
    QSet<QRgb> colors;
    for (int y = 0; y < img.height(); y += 2)
        for (int x = 0; x < img.width(); x += 2)
            colors.insert(img.pixel(x, y));
    return static_cast<int>(colors.size());
}
} // namespace

class TestWidgets : public QObject {
    Q_OBJECT
    QTemporaryDir dir_;

    QString writeFixture(const QString& name, const Capture& c)
    {
        const QString path = dir_.filePath(name);
        writeCapture(c, path.toStdString());
        return path;
    }

private slots:
    void initTestCase()
    {
        QStandardPaths::setTestModeEnabled(true); // QSettings land in a test location
        QVERIFY(dir_.isValid());
    }

    void flameGraphZoomAndSearch()
    {
        const Capture c = semCapture("baseline", 1.0);
        FlameGraphWidget w;
        w.resize(800, 300);
        w.setData(flameFromCallTree(
            std::make_shared<const CallTree>(CallTree::forCapture(c, TreeDirection::TopDown)),
            FlameWeight::Wait));
        w.show();
        QVERIFY(QTest::qWaitForWindowExposed(&w));
        // The middle of row d (0: the root).
        const auto row = [](int d) { return d * FlameGraphWidget::kRowHeight + FlameGraphWidget::kRowHeight / 2; };
        // Row 0 is the root, row 1 entry_SYSCALL_64 across the whole width.
        const int entry = w.nodeAt(QPointF(400, row(1)));
        QVERIFY(entry > 0);
        QCOMPARE(w.data().function(static_cast<uint32_t>(entry)), QStringLiteral("entry_SYSCALL_64"));
        QVERIFY(w.describe(static_cast<uint32_t>(entry)).contains(QStringLiteral("100.0 %")));

        // Clicking a deep frame zooms to it; it then spans the full width.
        int deep = -1;
        QPoint deepPos;
        for (int x = 5; x < 800 && deep < 0; x += 10) {
            const int id = w.nodeAt(QPointF(x, row(4)));
            if (id > 0 && w.data().function(static_cast<uint32_t>(id)) == QStringLiteral("do_semtimedop")) {
                deep = id;
                deepPos = QPoint(x, row(4));
            }
        }
        QVERIFY(deep > 0);
        QSignalSpy zoomed(&w, &FlameGraphWidget::zoomChanged);
        QTest::mouseClick(&w, Qt::LeftButton, {}, deepPos);
        QCOMPARE(w.zoomNode(), static_cast<uint32_t>(deep));
        QCOMPARE(zoomed.count(), 1);
        QCOMPARE(w.nodeAt(QPointF(790, row(4))), deep);
        QTest::keyClick(&w, Qt::Key_Escape);
        QCOMPARE(w.zoomNode(), 0u);

        const QImage before = w.grab().toImage();
        w.setSearch(QStringLiteral("sem_lock"));
        QVERIFY(w.searchCoveredShare() > 0.5 && w.searchCoveredShare() < 1.0);
        const QImage after = w.grab().toImage();
        QVERIFY(before != after);
        QVERIFY(distinctColors(before) > 5);
    }

    void flameGraphDifferentialColors()
    {
        const auto cmp = reports::compare(semCapture("baseline", 1.0), semCapture("patched", 0.1));
        FlameGraphWidget w;
        w.resize(600, 250);
        w.setData(flameFromDiffTree(std::make_shared<const reports::DiffTree>(cmp.tree), FlameWeight::Wait));
        const QImage img = w.grab().toImage();
        // Wait shrank under sem_lock: bluish pixels must dominate reddish ones.
        int blue = 0, red = 0;
        for (int y = 0; y < img.height(); ++y) {
            for (int x = 0; x < img.width(); ++x) {
                const QColor px = img.pixelColor(x, y);
                if (px.blue() > px.red() + 60)
                    ++blue;
                if (px.red() > px.blue() + 60)
                    ++red;
            }
        }
        QVERIFY2(blue > 1000, qPrintable(QString::number(blue)));
        QVERIFY(blue > red);
        const int root = w.nodeAt(QPointF(10, 9));
        QCOMPARE(root, 0);
        QVERIFY(w.describe(0).contains(QStringLiteral("before")));
    }

    void flameGraphEmpty()
    {
        FlameGraphWidget w;
        w.resize(300, 100);
        w.setData({});
        QCOMPARE(w.nodeAt(QPointF(10, 10)), -1);
        QTest::mouseClick(&w, Qt::LeftButton, {}, QPoint(10, 10));
        QCOMPARE(w.zoomNode(), 0u);
        QVERIFY(!w.grab().isNull());
    }

    void histogramModes()
    {
        HistogramChart chart(QStringLiteral("wait"));
        QCOMPARE(chart.bucketRange().second, -1);
        Log2Hist a, b;
        a.add(1000, 10);
        b.add(64000, 5);
        chart.setSeries({{QStringLiteral("a"), a, Qt::red}, {QStringLiteral("b"), b, Qt::blue}});
        QCOMPARE(chart.bucketRange().first, Log2Hist::bucketOf(1000));
        QCOMPARE(chart.bucketRange().second, int(Log2Hist::bucketOf(64000)));
        chart.setNormalized(true);
        QVERIFY(chart.normalized());
        QCOMPARE(chart.chart()->series().size(), 1);
        chart.resize(500, 300);
        QVERIFY(distinctColors(chart.grab().toImage()) > 5);
    }

    void selectionDrivesViews()
    {
        auto c = std::make_shared<const Capture>(semCapture("baseline", 1.0));
        CapturePage page;
        page.setCapture(c);
        QCOMPARE(page.selectedLock(), -1);
        const auto allWait = page.topDownModel()->tree()->root().total.wait_ns;
        page.selectLock(1); // rename_lock
        QCOMPARE(page.topDownModel()->tree()->root().total.wait_ns, c->locks[1].wait.total());
        QVERIFY(page.topDownModel()->tree()->root().total.wait_ns < allWait);
        QCOMPARE(page.flameGraph()->data().value(0), static_cast<double>(c->locks[1].wait.total()));
        QCOMPARE(page.waitChart()->bucketRange().first, Log2Hist::bucketOf(2500));
        // The bottom-up tree is made when its tab is shown, for the lock selected then.
        QVERIFY(!page.bottomUpModel()->tree());
        page.callTreeTabs()->setCurrentIndex(1);
        QVERIFY(page.bottomUpModel()->index(0, 0).data().toString() == QStringLiteral("_raw_spin_lock"));
        QCOMPARE(page.bottomUpModel()->tree()->root().total.wait_ns, c->locks[1].wait.total());
        page.selectLock(0); // while shown: follows the selection
        QCOMPARE(page.bottomUpModel()->tree()->root().total.wait_ns, c->locks[0].wait.total());
        page.callTreeTabs()->setCurrentIndex(0);
        page.selectLock(99); // out of range: back to all locks
        QCOMPARE(page.selectedLock(), -1);
        QVERIFY2(!page.bottomUpModel()->tree(), "a hidden bottom-up tab keeps no tree of an old selection");
        page.callTreeTabs()->setCurrentIndex(1);
        QCOMPARE(page.bottomUpModel()->tree()->root().total.wait_ns, allWait);
    }

    // The all-locks flame graph made on the loader thread is what the page
    // would have made itself, and the page shows it (not a copy) whenever all
    // locks are selected with widths = wait.
    void preparedFlameGraph()
    {
        auto c = std::make_shared<const Capture>(semCapture("baseline", 1.0));
        const PreparedCapture prepared = prepareCapture(c);
        QVERIFY(prepared.flame);
        const FlameData eager = flameFromCallTree(
            std::make_shared<const CallTree>(CallTree::forCapture(*c, TreeDirection::TopDown)),
            FlameWeight::Wait);
        QCOMPARE(prepared.flame->size(), eager.size());
        QCOMPARE(prepared.flame->tree, prepared.topDown); // the page's tree, not a copy
        for (uint32_t i = 0; i < eager.size(); ++i) {
            QCOMPARE(prepared.flame->function(i), eager.function(i));
            QCOMPARE(prepared.flame->module(i), eager.module(i));
            QCOMPARE(prepared.flame->parent(i), eager.parent(i));
            const auto ak = prepared.flame->children(i);
            const auto bk = eager.children(i);
            QVERIFY(std::equal(ak.begin(), ak.end(), bk.begin(), bk.end()));
            QCOMPARE(prepared.flame->value(i), eager.value(i));
        }
        CapturePage page;
        page.setPrepared(prepared);
        QCOMPARE(&page.flameGraph()->data(), prepared.flame.get());
        page.selectLock(1);
        QVERIFY(&page.flameGraph()->data() != prepared.flame.get());
        page.selectLock(-1);
        QCOMPARE(&page.flameGraph()->data(), prepared.flame.get());
    }

    void latencyTabSelection()
    {
        auto c = std::make_shared<const Capture>(latencyCapture());
        CapturePage page;
        page.setCapture(c);
        int tab = -1;
        for (int i = 0; i < page.tabs()->count(); ++i)
            if (page.tabs()->tabText(i) == QStringLiteral("Latency"))
                tab = i;
        QVERIFY2(tab >= 0, "no Latency tab");
        QVERIFY(page.latencyTableShown());
        QCOMPARE(page.latencyModel()->rowCount(), 3);
        QTableView* view = page.latencyView();
        QCOMPARE(view->model()->rowCount(), 3);

        // Opens on the first row.
        QCOMPARE(page.latencyChart()->series().size(), 1);
        QCOMPARE(page.latencyChart()->series().front().hist, c->syscalls[0].latency);
        QCOMPARE(page.latencyChart()->bucketRange().second, int(Log2Hist::bucketOf(64000)));
        QVERIFY(page.latencyChart()->title().contains(QStringLiteral("1 in 16")));

        // Selecting a row in the view (as a click does) drives the chart.
        auto rowOf = [view](const QString& name) {
            for (int r = 0; r < view->model()->rowCount(); ++r)
                if (view->model()->index(r, LatencyTableModel::Name).data().toString() == name)
                    return view->model()->index(r, 0);
            return QModelIndex();
        };
        view->sortByColumn(LatencyTableModel::Mean, Qt::AscendingOrder); // rows no longer in model order
        QCOMPARE(view->model()->index(0, LatencyTableModel::Name).data().toString(), QStringLiteral("__lock_timer"));
        view->selectionModel()->setCurrentIndex(rowOf(QStringLiteral("__lock_timer")),
                                                QItemSelectionModel::ClearAndSelect | QItemSelectionModel::Rows);
        QCOMPARE(page.latencyChart()->series().size(), 1);
        QCOMPARE(page.latencyChart()->series().front().hist, c->functions[0].latency);
        QCOMPARE(page.latencyChart()->series().front().name, QStringLiteral("__lock_timer"));
        QCOMPARE(page.latencyChart()->bucketRange().first, Log2Hist::bucketOf(150));
        QCOMPARE(page.latencyChart()->bucketRange().second, int(Log2Hist::bucketOf(5000)));
        view->selectionModel()->setCurrentIndex(rowOf(QStringLiteral("timer_gettime")),
                                                QItemSelectionModel::ClearAndSelect | QItemSelectionModel::Rows);
        QCOMPARE(page.latencyChart()->series().front().hist, c->syscalls[1].latency);
        QCOMPARE(page.latencyChart()->bucketRange().second, int(Log2Hist::bucketOf(300)));

        // And selecting programmatically moves the view's selection.
        page.selectLatency(0);
        QCOMPARE(view->selectionModel()->currentIndex().data(EntryIndexRole).toInt(), 0);
        QCOMPARE(page.latencyChart()->series().front().hist, c->syscalls[0].latency);

        page.tabs()->setCurrentIndex(tab);
        page.resize(1000, 700);
        QVERIFY(distinctColors(page.grab().toImage()) > 5);
    }

    void summaryShowsSamplingAndOwnLocks()
    {
        Capture c = latencyCapture();
        QVERIFY(!summaryHtml(reports::buildReport(c)).contains(QStringLiteral("not walked")));
        c.stats.stacks_unsampled = 906640;
        c.stats.own_lock_events = 4321;
        c.stats.waits_untimed = 765432;
        const QString html = summaryHtml(reports::buildReport(c));
        QVERIFY(html.contains(QStringLiteral("Waits not timed (timing budget)")));
        QVERIFY(html.contains(formatCount(765432)));
        QVERIFY(html.contains(QStringLiteral("Waits and holds not walked (stack budget)")));
        QVERIFY(html.contains(formatCount(906640)));
        QVERIFY(html.contains(QStringLiteral("Own probe locks left out")));
        QVERIFY(html.contains(formatCount(4321)));
        QVERIFY(!html.contains(QStringLiteral("Syscall latency")));
        QVERIFY(!html.contains(QStringLiteral("Impossible holds")));
        c.stats.impossible_holds = 37;
        const QString impossible = summaryHtml(reports::buildReport(c));
        QVERIFY(impossible.contains(QStringLiteral("Impossible holds dropped")));
        QVERIFY(impossible.contains(formatCount(37) + QStringLiteral(" <small>released before")));
        c.stats.syscalls_untimed = 54321;
        c.meta.syscall_timing_skipped = "syscall latency not timed by default: fentry refused";
        const QString skipped = summaryHtml(reports::buildReport(c));
        QVERIFY(skipped.contains(QStringLiteral("Syscalls not timed (syscall budget)")));
        QVERIFY(skipped.contains(formatCount(54321)));
        QVERIFY(skipped.contains(QStringLiteral("<b>not measured</b> <small>syscall latency not timed by default")));
        QVERIFY(!skipped.contains(QStringLiteral("CPU in BPF")));
        c.cpu.samples = 2000;
        c.cpu.bpf_samples = 150;
        QVERIFY(summaryHtml(reports::buildReport(c))
                    .contains(QStringLiteral("CPU in BPF (lockscope's too)</th><td>") + formatPercent(0.075) +
                              QStringLiteral(" of ") + formatCount(2000) + QStringLiteral(" samples")));
    }

    // A capture whose syscalls record chose not to time says why where the table would be.
    // Headline figures by the names the reports print, not their JSON keys.
    void compareSummaryNamesTheFigures()
    {
        Capture before = latencyCapture();
        Capture after = latencyCapture();
        for (Capture* c : {&before, &after}) {
            c->cpu.samples = 1000;
            c->cpu.lock_samples = 100;
            c->cpu.bpf_samples = 60;
        }
        const QString html = compareSummaryHtml(reports::compare(before, after));
        QVERIFY(html.contains(QStringLiteral("<td>CPU in lock functions</td>")));
        QVERIFY(html.contains(QStringLiteral("<td>CPU in BPF (lockscope's too)</td>")));
        QVERIFY(!html.contains(QStringLiteral("cpu_lock_share")));
        QVERIFY(html.contains(QStringLiteral("(on CPU in lock functions)")));
    }

    void latencyTabSaysWhySyscallsWereNotTimed()
    {
        CapturePage page;
        Capture c = semCapture("baseline", 1.0);
        c.meta.syscall_timing_skipped = "syscall latency not timed by default: fentry refused";
        page.setCapture(std::make_shared<const Capture>(c));
        QVERIFY(!page.latencyTableShown());
        QVERIFY(page.latencyEmptyLabel()->text().contains(QStringLiteral("no syscall or kernel function latency")));
        QVERIFY(page.latencyEmptyLabel()->text().contains(QStringLiteral("fentry refused")));
        // The next capture without it does not keep the old reason.
        page.setCapture(std::make_shared<const Capture>(semCapture("patched", 1.0)));
        QVERIFY(!page.latencyEmptyLabel()->text().contains(QStringLiteral("fentry refused")));
        // Today's captures say it in the syscall probe's status: off unless asked for.
        Capture off = semCapture("patched", 1.0);
        off.probes.push_back({"syscalls", "IPC and timer syscalls", "", false, offUnlessAskedFor("--syscalls")});
        page.setCapture(std::make_shared<const Capture>(off));
        QVERIFY(page.latencyEmptyLabel()->text().contains(QStringLiteral("syscall latency off unless asked for (--syscalls)")));
    }

    void latencyTabEmpty()
    {
        CapturePage page;
        page.setCapture(std::make_shared<const Capture>(semCapture("baseline", 1.0)));
        QVERIFY(!page.latencyTableShown());
        QVERIFY(page.latencyEmptyLabel()->text().contains(QStringLiteral("no syscall or kernel function latency")));
        QVERIFY(!page.latencyEmptyLabel()->text().contains(QLatin1Char('\n')));
        QVERIFY(page.latencyChart()->series().isEmpty());
        // A capture with entries brings the table back.
        page.setCapture(std::make_shared<const Capture>(latencyCapture()));
        QVERIFY(page.latencyTableShown());
        page.setCapture(std::make_shared<const Capture>(semCapture("baseline", 1.0)));
        QVERIFY(!page.latencyTableShown());
        QCOMPARE(page.latencyModel()->rowCount(), 0);
    }

    void compareLatencyTab()
    {
        Capture before = latencyCapture();
        Capture after = latencyCapture();
        after.meta.label = "patched";
        after.syscalls[0].latency = {};
        after.syscalls[0].latency.add(1000, 3000);
        auto cmp = std::make_shared<const reports::Comparison>(reports::compare(before, after));
        ComparePage page;
        page.setComparison(
            cmp, std::make_shared<const Capture>(before), std::make_shared<const Capture>(after));
        QVERIFY(page.latencyTableShown());
        QCOMPARE(page.latencyModel()->rowCount(), 3);
        bool hasTab = false;
        for (int i = 0; i < page.tabs()->count(); ++i)
            hasTab = hasTab || page.tabs()->tabText(i) == QStringLiteral("Latency");
        QVERIFY(hasTab);
        for (int r = 0; r < page.latencyModel()->rowCount(); ++r) {
            page.selectLatency(r);
            const reports::LatencyDelta& d = *page.latencyModel()->row(r);
            QCOMPARE(page.latencyChart()->series().size(), 2);
            QCOMPARE(page.latencyChart()->series()[0].hist, d.before);
            QCOMPARE(page.latencyChart()->series()[1].hist, d.after);
            QCOMPARE(page.latencyChart()->series()[1].name, QStringLiteral("patched"));
        }
        page.setNormalized(false);
        QVERIFY(!page.latencyChart()->normalized());

        Capture none = semCapture("baseline", 1.0);
        page.setComparison(std::make_shared<const reports::Comparison>(reports::compare(none, none)),
            std::make_shared<const Capture>(none), std::make_shared<const Capture>(none));
        QVERIFY(!page.latencyTableShown());
        QVERIFY(page.latencyChart()->series().isEmpty());
    }

    void openGoodCapture()
    {
        const QString path = writeFixture(QStringLiteral("good.json"), semCapture("baseline", 1.0));
        MainWindow w;
        QSignalSpy shown(&w, &MainWindow::captureShown);
        w.openCapture(path);
        QVERIFY(shown.wait(10000));
        QVERIFY(!w.inCompareMode());
        QCOMPARE(w.capturePage()->lockModel()->rowCount(), 3);
        QCOMPARE(w.recentFiles().value(0), path);
    }

    void badFileShowsReaderMessage()
    {
        const QString path = dir_.filePath(QStringLiteral("bad.json"));
        QFile f(path);
        QVERIFY(f.open(QIODevice::WriteOnly));
        f.write(R"({"format": "lockscope-capture", "version": 1, "meta": 42})");
        f.close();
        MainWindow w;
        QSignalSpy errors(&w, &MainWindow::errorShown);
        w.openCapture(path);
        QVERIFY(errors.wait(10000));
        const QString msg = errors.front().front().toString();
        QVERIFY2(msg.contains(QStringLiteral("bad.json")), qPrintable(msg));
        QVERIFY(!msg.contains(QLatin1Char('\n')));
        // The dialog is up (non-blocking) and carries the same line.
        auto* box = w.findChild<QMessageBox*>();
        QVERIFY(box);
        QCOMPARE(box->text(), msg);

        QSignalSpy missing(&w, &MainWindow::errorShown);
        w.openCapture(dir_.filePath(QStringLiteral("does-not-exist.json")));
        QVERIFY(missing.wait(10000));
        QVERIFY(missing.front().front().toString().contains(QStringLiteral("does-not-exist.json")));
    }

    void scalingCurves()
    {
        scaling::ScalingRun run;
        run.meta.tool_version = "0.1.0";
        run.meta.created = "2025-03-14T09:00:00Z";
        run.meta.hostname = "h";
        run.meta.kernel_release = "6.18.0";
        run.meta.cpu_model = "cpu";
        run.meta.cpus = 2;
        run.meta.duration_per_point_s = 1;
        run.meta.thread_counts = {1, 2};
        run.meta.command = {"lockscope-scaling"};
        scaling::ScalingPair pair;
        pair.id = "sem-lock-scope";
        pair.title = "semaphore lock scope";
        pair.kernel_change = "ipc,sem: do not hold ipc lock more than necessary";
        pair.workload = "semop-multi";
        for (const char* name : {"before", "after"}) {
            scaling::ScalingVariant v;
            v.name = name;
            v.description = name;
            for (unsigned t : {1u, 2u}) {
                const double ops = (std::string(name) == "after" ? 2000.0 : 1000.0) * t;
                v.points.push_back({t, static_cast<uint64_t>(ops), 1.0, ops, {}});
            }
            pair.variants.push_back(v);
        }
        run.pairs.push_back(pair);
        const QString path = dir_.filePath(QStringLiteral("scaling.json"));
        scaling::writeScaling(run, path.toStdString());

        MainWindow w;
        QVERIFY(w.loadScaling(path));
        const auto& charts = w.comparePage()->scalingView()->charts();
        QCOMPARE(charts.size(), size_t(1));
        QCOMPARE(charts.front().series.size(), size_t(2));
        QCOMPARE(charts.front().series.back().points.back().y, 4000.0);

        QSignalSpy errors(&w, &MainWindow::errorShown);
        QVERIFY(!w.loadScaling(writeFixture(QStringLiteral("capture-not-scaling.json"), semCapture("x", 1.0))));
        QCOMPARE(errors.count(), 1);
        QVERIFY(errors.front().front().toString().contains(QStringLiteral("capture-not-scaling.json")));
    }

    // A seed workload's reference pair without flags: the shipped results
    // first, then this machine's measurement (the real harness, short
    // points), which is cached and preferred; Cancel leaves no file behind.
    void referenceScalingBesideSeedCaptures()
    {
        const QString cache = dir_.filePath(QStringLiteral("cache"));
        qputenv("XDG_CACHE_HOME", cache.toUtf8());
        const QString harness = qEnvironmentVariable("LOCKSCOPE_TEST_SCALING_HARNESS");
        QVERIFY2(QFileInfo(harness).isExecutable(), "LOCKSCOPE_TEST_SCALING_HARNESS names no lockscope-scaling");
        Capture before = semCapture("baseline", 1.0);
        before.workload.command = {"/usr/lib/lockscope/timer-stress", "--procs", "4"};
        Capture after = before;
        after.meta.label = "patched";
        ComparePage page;
        ScalingView* view = page.scalingView();
        view->measurement()->setHarness(harness);
        const auto show = [&](const Capture& b, const Capture& a) {
            page.setComparison(std::make_shared<const reports::Comparison>(reports::compare(b, a)),
                std::make_shared<const Capture>(b), std::make_shared<const Capture>(a));
        };
        show(before, after);
        QCOMPARE(view->charts().size(), size_t(1));
        QCOMPARE(view->charts().front().pair_id, std::string("posix-timer-lookup"));
        QCOMPARE(view->charts().front().series.size(), size_t(2));
        QVERIFY2(view->sourceText().contains(QStringLiteral("shipped with lockscope")), qPrintable(view->sourceText()));
        QVERIFY(view->canMeasure());

        QPushButton* measure = nullptr;
        for (auto* b : view->findChildren<QPushButton*>())
            if (b->text() == QStringLiteral("Measure on this machine"))
                measure = b;
        QVERIFY(measure && measure->isVisibleTo(view));
        QSignalSpy ended(view, &ScalingView::measurementEnded);
        QSignalSpy progress(view->measurement(), &ScalingMeasurement::progress);
        view->measurement()->setExtraArguments({QStringLiteral("--duration"), QStringLiteral("0.05"),
                                                QStringLiteral("--max-threads"), QStringLiteral("2")});
        measure->click();
        QVERIFY(!view->canMeasure());
        QVERIFY(ended.wait(120000));
        QVERIFY2(view->sourceText().contains(QStringLiteral("measured on this machine")), qPrintable(view->sourceText()));
        QCOMPARE(progress.size(), 4); // threads 1 and 2, before and after
        QCOMPARE(progress.back().at(0).toInt(), 4);
        QCOMPARE(progress.back().at(1).toInt(), 4);
        const QString cached = cachedScalingPath(QStringLiteral("timer-stress"));
        QVERIFY(QFileInfo::exists(cached));
        QCOMPARE(view->charts().size(), size_t(1));
        QVERIFY(view->charts().front().measured_on.find(QSysInfo::machineHostName().toStdString()) == 0);
        show(before, after); // a later comparison finds the cached measurement
        QVERIFY(view->sourceText().contains(QStringLiteral("measured on this machine")));

        QVERIFY(QFile::remove(cached));
        view->measurement()->setExtraArguments({QStringLiteral("--duration"), QStringLiteral("30")});
        measure->click();
        QVERIFY(view->measurement()->running());
        view->measurement()->cancel();
        QVERIFY(ended.wait(10000));
        QVERIFY2(view->sourceText().startsWith(QStringLiteral("Measurement cancelled")), qPrintable(view->sourceText()));
        QVERIFY(view->sourceText().contains(QStringLiteral("shipped with lockscope")));
        QVERIFY(QDir(scalingCacheDir()).entryList(QDir::Files).isEmpty());

        view->measurement()->setExtraArguments({QStringLiteral("--duration"), QStringLiteral("-1")});
        measure->click();
        QVERIFY(ended.wait(10000));
        QVERIFY2(view->sourceText().contains(QStringLiteral("lockscope-scaling failed (exit 2)")),
                 qPrintable(view->sourceText()));
        QVERIFY(QDir(scalingCacheDir()).entryList(QDir::Files).isEmpty());

        Capture other = semCapture("baseline", 1.0); // semop-bench: no reference pair models it
        show(other, other);
        QVERIFY(view->charts().empty());
        QVERIFY(view->sourceText().contains(QStringLiteral("No reference pair models the workload semop-bench")));
        QVERIFY(!view->canMeasure());

        view->setCharts(reports::chartsForWorkload(view->charts(), "none")); // results loaded by hand win
        show(before, after);
        QVERIFY(view->charts().empty());
        QVERIFY(view->sourceText().isEmpty());
    }

    void recordCommandLine()
    {
        RecordRequest r;
        r.lockscope = QStringLiteral("/usr/bin/lockscope");
        r.output = QStringLiteral("/tmp/out.json");
        r.label = QStringLiteral("patched");
        r.duration_s = 5;
        r.workload = {QStringLiteral("semop-bench"), QStringLiteral("--threads"), QStringLiteral("8")};
        r.elevate = QStringLiteral("pkexec");
        QCOMPARE(recordCommand(r).join(QLatin1Char(' ')),
                 QStringLiteral("pkexec /usr/bin/lockscope record --stop-on-stdin-close -o /tmp/out.json --label "
                                "patched -d 5 -- semop-bench --threads 8"));
        r.elevate = QStringLiteral("sudo");
        r.workload.clear();
        r.all = true;
        QCOMPARE(recordCommand(r).join(QLatin1Char(' ')),
                 QStringLiteral("sudo -n /usr/bin/lockscope record --stop-on-stdin-close -o /tmp/out.json --label "
                                "patched -d 5 -a"));
        r.elevate = QStringLiteral("/usr/bin/sudo");
        QCOMPARE(recordCommand(r).mid(0, 2).join(QLatin1Char(' ')), QStringLiteral("/usr/bin/sudo -n"));
        r.elevate.clear();
        QCOMPARE(recordCommand(r).front(), r.lockscope);
        // The probes record leaves off unless asked for, before the workload.
        r.all = false;
        r.workload = {QStringLiteral("timer-stress")};
        r.also_time = {true, false, true};
        QCOMPARE(recordCommand(r).join(QLatin1Char(' ')),
                 QStringLiteral("/usr/bin/lockscope record --stop-on-stdin-close -o /tmp/out.json --label patched -d 5 "
                                "--syscalls --functions -- timer-stress"));
        r.also_time[1] = true;
        QVERIFY(recordCommand(r).contains(QStringLiteral("--hold")));
    }

    // pkexec/sudo reset PATH (and pkexec the working directory): every path
    // the recorder gets must stand on its own.
    void recordPathsAreAbsolute()
    {
        RecordRequest r;
        r.lockscope = QStringLiteral("lockscope-build/cli/lockscope");
        r.output = QStringLiteral("out.json");
        r.workload = {QStringLiteral("sh"), QStringLiteral("-c"), QStringLiteral("true")};
        r.elevate = QStringLiteral("sh"); // any program on PATH stands in for pkexec
        const RecordRequest a = withAbsolutePaths(r);
        QCOMPARE(a.output, QDir::current().filePath(QStringLiteral("out.json")));
        QCOMPARE(a.lockscope, QDir::current().filePath(QStringLiteral("lockscope-build/cli/lockscope")));
        QCOMPARE(a.workload.front(), QStandardPaths::findExecutable(QStringLiteral("sh")));
        QVERIFY(a.workload.front().startsWith(QLatin1Char('/')));
        QCOMPARE(a.workload.mid(1), r.workload.mid(1));
        QCOMPARE(a.elevate, a.workload.front());
        r.workload = {QStringLiteral("no-such-program-lockscope")};
        QCOMPARE(withAbsolutePaths(r).workload.front(), QStringLiteral("no-such-program-lockscope"));
    }

    void dropOpensOrCompares()
    {
        const QString a = writeFixture(QStringLiteral("drop-a.json"), semCapture("baseline", 1.0));
        const QString b = writeFixture(QStringLiteral("drop-b.json"), semCapture("patched", 0.1));
        MainWindow w;
        auto drop = [&w](const QStringList& paths) {
            QMimeData mime;
            QList<QUrl> urls;
            for (const QString& p : paths)
                urls << QUrl::fromLocalFile(p);
            mime.setUrls(urls);
            QDragEnterEvent enter(QPoint(10, 10), Qt::CopyAction, &mime, Qt::LeftButton, Qt::NoModifier);
            QApplication::sendEvent(&w, &enter);
            QVERIFY(enter.isAccepted());
            QDropEvent dropEvent(QPointF(10, 10), Qt::CopyAction, &mime, Qt::LeftButton, Qt::NoModifier);
            QApplication::sendEvent(&w, &dropEvent);
        };
        QSignalSpy single(&w, &MainWindow::captureShown);
        drop({a});
        QVERIFY(single.wait(10000));
        QVERIFY(!w.inCompareMode());
        QSignalSpy pair(&w, &MainWindow::comparisonShown);
        drop({a, b});
        QVERIFY(pair.wait(10000));
        QVERIFY(w.inCompareMode());
    }

    // Two directories of runs are compared as run sets: the comparison has
    // every run of each side, so its verdicts rest on run statistics. Only
    // each side's first run is loaded whole; the comparison folds every run
    // in as it reads it, and is the one all runs loaded at once give.
    void compareRunSetDirectories()
    {
        const QString base = dir_.filePath(QStringLiteral("base-runs")), patched = dir_.filePath(QStringLiteral("patched-runs"));
        QVERIFY(QDir().mkpath(base) && QDir().mkpath(patched));
        for (int i = 0; i < 3; ++i) {
            writeCapture(semCapture("baseline", 1.0 + 0.02 * i), QDir(base).filePath(QStringLiteral("run-%1.lockscope.json").arg(i)).toStdString());
            writeCapture(semCapture("patched", 0.1 + 0.002 * i), QDir(patched).filePath(QStringLiteral("run-%1.lockscope.json").arg(i)).toStdString());
        }
        MainWindow w;
        QSignalSpy shown(&w, &MainWindow::comparisonShown);
        w.compareCaptures(base, patched);
        QVERIFY2(shown.wait(10000), qPrintable(w.lastError()));
        const reports::Comparison* c = w.comparePage()->comparison();
        QVERIFY(c);
        QCOMPARE(c->runs_before, size_t(3));
        QCOMPARE(c->runs_after, size_t(3));
        QVERIFY(w.windowTitle().contains(QStringLiteral("base-runs (3 runs)")));
        const auto [b, a] = reports::loadSets(reports::expandCaptureArgs({base.toStdString()}),
                                              reports::expandCaptureArgs({patched.toStdString()}));
        QCOMPARE(reports::render(*c, reports::Format::Json),
                 reports::render(reports::compareSets(b, a), reports::Format::Json));

        QSignalSpy errors(&w, &MainWindow::errorShown);
        w.compareCaptures(dir_.filePath(QStringLiteral("no-such-dir")), patched);
        QTRY_COMPARE_WITH_TIMEOUT(errors.count(), 1, 10000);
        // A damaged run that is not a side's first is named too.
        QFile cut(QDir(patched).filePath(QStringLiteral("run-2.lockscope.json")));
        QVERIFY(cut.open(QIODevice::WriteOnly | QIODevice::Truncate));
        cut.write("{\"format\": \"lockscope-capture\"");
        cut.close();
        w.compareCaptures(base, patched);
        QTRY_COMPARE_WITH_TIMEOUT(errors.count(), 2, 10000);
        QVERIFY2(w.lastError().contains(QStringLiteral("run-2.lockscope.json")), qPrintable(w.lastError()));
    }

    void compareAndExport()
    {
        const QString a = writeFixture(QStringLiteral("a.json"), semCapture("baseline", 1.0));
        const QString b = writeFixture(QStringLiteral("b.json"), semCapture("patched", 0.1));
        MainWindow w;
        QSignalSpy shown(&w, &MainWindow::comparisonShown);
        w.compareCaptures(a, b);
        QVERIFY(shown.wait(10000));
        QVERIFY(w.inCompareMode());
        QCOMPARE(w.comparePage()->deltaModel()->rowCount(), 3);
        QVERIFY(w.comparePage()->headline()->text().contains(QStringLiteral("→")));
        QCOMPARE(w.recentFiles().value(0), a + QLatin1Char('\n') + b);
        // Opens sorted by verdict severity then change, on the top row: the lock whose wait changed most.
        QCOMPARE(w.comparePage()->comparison()->locks[static_cast<size_t>(w.comparePage()->selectedLock())].key,
                 std::string("spinlock@sem_lock"));
        QCOMPARE(static_cast<size_t>(w.comparePage()->selectedLock()),
                 reports::changedFirstOrder(*w.comparePage()->comparison()).front());
        // Each side's page shows that side's capture with its own call tree and flame graph,
        // made when the "Side by side" tab is first shown (ComparePage::prepareSides).
        ComparePage* page = w.comparePage();
        QVERIFY(page->sidesPending());
        QVERIFY(!page->beforePage()->capture() && !page->afterPage()->capture());
        QSignalSpy sides(page, &ComparePage::sidesShown);
        page->tabs()->setCurrentWidget(page->sideBySideTab());
        QVERIFY(sides.wait(10000));
        QVERIFY(!page->sidesPending());
        for (CapturePage* side : { page->beforePage(), page->afterPage() }) {
            QVERIFY(side->capture());
            const FlameData& flame = side->flameGraph()->data();
            QVERIFY(flame.tree);
            QVERIFY(!flame.differential());
            QCOMPARE(side->topDownModel()->tree(), flame.tree.get());
            uint64_t waits = 0;
            for (const Lock& l : side->capture()->locks)
                waits += l.wait.total();
            QCOMPARE(flame.value(0), static_cast<double>(waits));
        }
        QVERIFY(w.comparePage()->beforePage()->capture() != w.comparePage()->afterPage()->capture());

        const QString html = dir_.filePath(QStringLiteral("r.html"));
        const QString md = dir_.filePath(QStringLiteral("r.md"));
        QVERIFY(w.exportReport(html));
        QVERIFY(w.exportReport(md));
        for (const QString& p : {html, md}) {
            QFile f(p);
            QVERIFY(f.open(QIODevice::ReadOnly));
            QVERIFY(f.readAll().contains("spinlock@sem_lock"));
        }
        QSignalSpy errors(&w, &MainWindow::errorShown);
        QVERIFY(!w.exportReport(dir_.filePath(QStringLiteral("r.docx"))));
        QCOMPARE(errors.count(), 1);
    }
};

QTEST_MAIN(TestWidgets)
#include "widgets_test.moc"
