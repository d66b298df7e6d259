// SPDX-License-Identifier: GPL-2.0-or-later
// End to end: the main window opens the capture fixtures (a realistic
// baseline/patched pair) in compare mode, exactly as
// `lockscope-gui --compare before.json after.json` does, and the grabbed
// window must show real content. Runs on the offscreen platform and, as a
// second CTest test, on a real X server under xvfb-run.
#include <QApplication>
#include <QFileInfo>
#include <QHash>
#include <QImage>
#include <QLabel>
#include <QSet>
#include <QSignalSpy>
#include <QTabWidget>
#include <QStandardPaths>
#include <QTest>

#include "app/capturepage.h"
#include "app/comparepage.h"
#include "app/flamegraphwidget.h"
#include "app/histogramchart.h"
#include "app/mainwindow.h"
#include "model/deltatablemodel.h"

using namespace lockscope::gui;

class TestSmoke : public QObject {
    Q_OBJECT
private slots:
    void initTestCase() { QStandardPaths::setTestModeEnabled(true); }

    void compareFixtures()
    {
        const QString before = qEnvironmentVariable("LOCKSCOPE_FIXTURE_BEFORE");
        const QString after = qEnvironmentVariable("LOCKSCOPE_FIXTURE_AFTER");
        const QString shot = qEnvironmentVariable("LOCKSCOPE_SCREENSHOT");
        QVERIFY2(QFileInfo::exists(before) && QFileInfo::exists(after),
                 qPrintable(QStringLiteral("fixtures missing: '%1', '%2'").arg(before, after)));

        MainWindow w;
        w.resize(1500, 950);
        w.show();
        QVERIFY(QTest::qWaitForWindowExposed(&w));
        QSignalSpy shown(&w, &MainWindow::comparisonShown);
        QSignalSpy errors(&w, &MainWindow::errorShown);
        w.compareCaptures(before, after);
        QTRY_VERIFY_WITH_TIMEOUT(shown.count() > 0 || errors.count() > 0, 30000);
        QVERIFY2(errors.isEmpty(), qPrintable(w.lastError()));

        ComparePage* page = w.comparePage();
        QVERIFY(page->isVisible());
        QVERIFY(page->deltaModel()->rowCount() >= 2);
        QVERIFY(!page->flameGraph()->data().drawsNothing());
        QVERIFY(page->flameGraph()->data().differential());
        QVERIFY(page->waitChart()->bucketRange().second >= 0);
        QVERIFY(page->headline()->text().contains(QStringLiteral("→")));
        QTest::qWait(200); // let the charts lay out

        const QImage img = w.grab().toImage().convertToFormat(QImage::Format_RGB32);
        QVERIFY(!img.isNull());
        QHash<QRgb, int> histogram;
        int reddish = 0, bluish = 0;
        for (int y = 0; y < img.height(); ++y) {
            for (int x = 0; x < img.width(); ++x) {
                const QRgb px = img.pixel(x, y);
                ++histogram[px];
                if (qRed(px) > qBlue(px) + 80 && qGreen(px) < 200)
                    ++reddish;
                if (qBlue(px) > qRed(px) + 80)
                    ++bluish;
            }
        }
        int commonest = 0;
        for (int n : histogram)
            commonest = std::max(commonest, n);
        const double pixels = double(img.width()) * img.height();
        qInfo("screenshot %dx%d: %d distinct colours, commonest %.1f %%, reddish %d, bluish %d", img.width(),
              img.height(), int(histogram.size()), 100.0 * commonest / pixels, reddish, bluish);
        QVERIFY2(histogram.size() > 200, "too few distinct colours: the window looks empty");
        QVERIFY2(commonest < 0.85 * pixels, "one colour covers almost the whole window");
        // Bars of both sides and the differential flame graph colour the window.
        QVERIFY(bluish > 500);
        QVERIFY(reddish > 500);
        if (!shot.isEmpty()) {
            QVERIFY(img.save(shot));
            qInfo("screenshot saved to %s", qPrintable(shot));
        }
    }

    // Every tab of the single-capture view renders real content.
    void singleCaptureTabs()
    {
        const QString before = qEnvironmentVariable("LOCKSCOPE_FIXTURE_BEFORE");
        const QString shot = qEnvironmentVariable("LOCKSCOPE_SCREENSHOT");
        QVERIFY(QFileInfo::exists(before));
        MainWindow w;
        w.resize(1300, 850);
        w.show();
        QVERIFY(QTest::qWaitForWindowExposed(&w));
        QSignalSpy shown(&w, &MainWindow::captureShown);
        QSignalSpy errors(&w, &MainWindow::errorShown);
        w.openCapture(before);
        QTRY_VERIFY_WITH_TIMEOUT(shown.count() > 0 || errors.count() > 0, 30000);
        QVERIFY2(errors.isEmpty(), qPrintable(w.lastError()));
        QTabWidget* tabs = w.capturePage()->tabs();
        for (int i = 0; i < tabs->count(); ++i) {
            tabs->setCurrentIndex(i);
            QTest::qWait(50);
            const QImage img = w.grab().toImage();
            QSet<QRgb> colors;
            for (int y = 0; y < img.height(); y += 2)
                for (int x = 0; x < img.width(); x += 2)
                    colors.insert(img.pixel(x, y));
            qInfo("tab %s: %d distinct colours", qPrintable(tabs->tabText(i)), int(colors.size()));
            QVERIFY2(colors.size() > 40, qPrintable(tabs->tabText(i)));
            if (!shot.isEmpty())
                img.save(QString(shot).replace(QStringLiteral(".png"), QStringLiteral("-capture-tab%1.png").arg(i)));
        }
    }
};

QTEST_MAIN(TestSmoke)
#include "smoke_test.moc"
