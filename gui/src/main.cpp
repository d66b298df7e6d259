// SPDX-License-Identifier: GPL-2.0-or-later
#include <cstdio>

#include <QApplication>
#include <QCommandLineParser>
#include <QTimer>

#include "app/mainwindow.h"

using lockscope::gui::MainWindow;

int main(int argc, char** argv)
{
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
    parser.addOption(compare);
    parser.addOption(scaling);
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

    MainWindow window;
    window.show();
    for (const QString& f : parser.values(scaling))
        window.loadScaling(f);
    if (parser.isSet(compare))
        window.compareCaptures(files[0], files[1]);
    else if (files.size() == 1)
        window.openCapture(files[0]);
    return app.exec();
}
