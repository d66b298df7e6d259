// SPDX-License-Identifier: GPL-2.0-or-later
#include <cstdio>
#include <functional>

#include <QApplication>
#include <QCommandLineParser>
#include <QTabWidget>
#include <QTimer>

#include "app/comparepage.h"
#include "app/mainwindow.h"
#include "app/processheap.h"

using lockscope::gui::ComparePage;
using lockscope::gui::MainWindow;

namespace {

// Runs f after `turns` passes of the event loop (a 0 ms timer each): each
// handles what is queued (layout requests, charts resized to the window)
// and the next what that queued in turn. It replaces a fixed 200 ms wait;
// the PNGs came out byte for byte the same, already with one pass.
void afterIdleTurns(QObject* context, int turns, std::function<void()> f)
{
    QTimer::singleShot(0, context, [context, turns, f = std::move(f)]() mutable {
        if (turns <= 1)
            f();
        else
            afterIdleTurns(context, turns - 1, std::move(f));
    });
}

// --screenshot: once the capture or comparison is shown (and laid out),
// selects the --lock row and the --tab page of the comparison, saves the
// window as a PNG and quits; an error on the way is one line and exit 1.
// Runs without a display under QT_QPA_PLATFORM=offscreen (README images).
void saveWhenShown(MainWindow& window, const QString& file, const QString& lock, const QString& tab)
{
    auto save = [&window, file, lock, tab] {
        auto* page = window.comparePage();
        if (window.inCompareMode() && !lock.isEmpty()) {
            const auto& locks = page->comparison()->locks;
            int row = -1;
            for (size_t i = 0; i < locks.size() && row < 0; ++i)
                if (QString::fromStdString(locks[i].key) == lock)
                    row = static_cast<int>(i);
            if (row < 0) {
                std::fprintf(stderr, "lockscope-gui: no lock %s in the comparison\n", qPrintable(lock));
                QApplication::exit(1);
                return;
            }
            page->selectLock(row);
        }
        for (int i = 0; window.inCompareMode() && !tab.isEmpty() && i < page->tabs()->count(); ++i)
            if (page->tabs()->tabText(i) == tab)
                page->tabs()->setCurrentIndex(i);
        // Turns of the event loop so that what the views posted (layout
        // requests, charts resized to the window) is done before the grab.
        auto grab = [&window, file] {
            afterIdleTurns(&window, 3, [&window, file] {
                if (!window.grab().save(file, "PNG")) {
                    std::fprintf(stderr, "lockscope-gui: cannot write %s\n", qPrintable(file));
                    QApplication::exit(1);
                    return;
                }
                QApplication::exit(0);
            });
        };
        // The side-by-side tab makes its pages when shown: grabbed once they are.
        if (window.inCompareMode() && page->tabs()->currentWidget() == page->sideBySideTab()
            && page->sidesPending())
            QObject::connect(page, &ComparePage::sidesShown, &window, grab, Qt::SingleShotConnection);
        else
            grab();
    };
    QObject::connect(&window, &MainWindow::comparisonShown, &window, save);
    QObject::connect(&window, &MainWindow::captureShown, &window, save);
    QObject::connect(&window, &MainWindow::errorShown, &window, [](const QString& message) {
        std::fprintf(stderr, "lockscope-gui: %s\n", qPrintable(message));
        QApplication::exit(1);
    });
}

} // namespace

int main(int argc, char** argv)
{
    lockscope::gui::useGuiHeap(argv); // opening a big capture is mostly filling fresh heap
    QApplication app(argc, argv);
    QApplication::setOrganizationName(QStringLiteral("lockscope"));
    QApplication::setApplicationName(QStringLiteral("lockscope-gui"));
    QApplication::setApplicationVersion(QStringLiteral(LOCKSCOPE_VERSION));
    QApplication::setDesktopFileName(QStringLiteral("lockscope-gui"));

    QCommandLineParser parser;
    parser.setApplicationDescription(QStringLiteral("Explore a lockscope capture or compare two kernel builds."));
    parser.addHelpOption();
    parser.addVersionOption();
    const QCommandLineOption compare({QStringLiteral("d"), QStringLiteral("compare")},
                                     QStringLiteral("Compare BEFORE AFTER (baseline first): two captures, or two directories of "
                                                    "repeated runs (their *.lockscope.json files)."));
    const QCommandLineOption scaling(QStringLiteral("scaling"),
                                     QStringLiteral("Show reference scaling curves from FILE (repeatable)."),
                                     QStringLiteral("FILE"));
    const QCommandLineOption screenshot(QStringLiteral("screenshot"),
                                        QStringLiteral("Save the window as a PNG to FILE once the capture or comparison is "
                                                       "shown, then quit."),
                                        QStringLiteral("FILE"));
    const QCommandLineOption lock(QStringLiteral("lock"),
                                  QStringLiteral("With --compare: select the lock with this KEY."), QStringLiteral("KEY"));
    const QCommandLineOption tab(QStringLiteral("tab"),
                                 QStringLiteral("With --compare: show the tab with this TITLE (e.g. \"Reference scaling\")."),
                                 QStringLiteral("TITLE"));
    parser.addOption(compare);
    parser.addOption(scaling);
    parser.addOption(screenshot);
    parser.addOption(lock);
    parser.addOption(tab);
    parser.addPositionalArgument(QStringLiteral("capture"), QStringLiteral("Capture file(s) to open."),
                                 QStringLiteral("[capture.json | --compare before.json after.json]"));
    parser.process(app);

    const QStringList files = parser.positionalArguments();
    if (parser.isSet(compare) && files.size() != 2) {
        std::fprintf(stderr, "lockscope-gui: --compare needs exactly two captures (before after), got %d; "
                             "run lockscope-gui --help\n",
                     static_cast<int>(files.size()));
        return 2;
    }
    if (!parser.isSet(compare) && files.size() > 1) {
        std::fprintf(stderr, "lockscope-gui: got %d captures; open one, or pass --compare before.json after.json\n",
                     static_cast<int>(files.size()));
        return 2;
    }

    if (parser.isSet(screenshot) && files.isEmpty()) {
        std::fprintf(stderr, "lockscope-gui: --screenshot needs a capture or --compare before.json after.json\n");
        return 2;
    }

    MainWindow window;
    if (parser.isSet(screenshot)) {
        window.resize(1400, 900);
        saveWhenShown(window, parser.value(screenshot), parser.value(lock), parser.value(tab));
    }
    window.show();
    for (const QString& f : parser.values(scaling))
        window.loadScaling(f);
    if (parser.isSet(compare))
        window.compareCaptures(files[0], files[1]);
    else if (files.size() == 1)
        window.openCapture(files[0]);
    return app.exec();
}
