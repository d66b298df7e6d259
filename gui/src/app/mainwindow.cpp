// SPDX-License-Identifier: GPL-2.0-or-later
#include "app/mainwindow.h"

#include <QApplication>
#include <QDragEnterEvent>
#include <QDropEvent>
#include <QFileDialog>
#include <QFileInfo>
#include <QFutureWatcher>
#include <QLabel>
#include <QMenuBar>
#include <QMessageBox>
#include <QMimeData>
#include <QProgressBar>
#include <QSettings>
#include <QStackedWidget>
#include <QStatusBar>
#include <QtConcurrent/QtConcurrentRun>

#include "app/capturepage.h"
#include "app/comparepage.h"
#include "app/processheap.h"
#include "app/recorddialog.h"
#include "app/scalingview.h"
#include "lockscope/capture/io.h"
#include "lockscope/reports/input.h"
#include "lockscope/reports/render.h"
#include "lockscope/util/output_file.h"

namespace lockscope::gui {

namespace {
constexpr int kMaxRecent = 8;
const QString kRecentKey = QStringLiteral("recentFiles");
// A compare entry in the recent list holds both paths.
const QChar kPairSeparator = QLatin1Char('\n');
const QString kCaptureFilter = QStringLiteral("lockscope captures (*.json);;All files (*)");

struct CompareResult {
    std::shared_ptr<const reports::Comparison> comparison;
    QString error;
};
} // namespace

MainWindow::MainWindow(QWidget* parent) : QMainWindow(parent)
{
    setWindowTitle(QStringLiteral("lockscope"));
    setAcceptDrops(true);
    resize(1400, 900);

    stack_ = new QStackedWidget;
    auto* welcome = new QLabel(tr("<h2>lockscope</h2><p>Open a capture (File → Open…), compare two kernel builds "
                                  "(File → Compare…), or drop one or two capture files here.</p>"
                                  "<p>Record one with <tt>sudo lockscope record -o capture.json -- WORKLOAD</tt>.</p>"));
    welcome->setAlignment(Qt::AlignCenter);
    capturePage_ = new CapturePage;
    comparePage_ = new ComparePage;
    stack_->addWidget(welcome);
    stack_->addWidget(capturePage_);
    stack_->addWidget(comparePage_);
    setCentralWidget(stack_);

    status_ = new QLabel;
    status_->setTextFormat(Qt::PlainText); // file names, errors quoting capture contents
    progress_ = new QProgressBar;
    progress_->setMaximumWidth(200);
    progress_->setVisible(false);
    statusBar()->addWidget(status_, 1);
    statusBar()->addPermanentWidget(progress_);

    loader_ = new CaptureLoader(this);
    connect(loader_, &CaptureLoader::progress, this, [this](int done, int total, const QString& name) {
        progress_->setRange(0, total);
        progress_->setValue(done);
        status_->setText(tr("Loading %1 (%2 of %3 read)…").arg(name).arg(done).arg(total));
    });
    connect(loader_, &CaptureLoader::loaded, this, &MainWindow::onLoaded);
    connect(loader_, &CaptureLoader::failed, this, [this](const QString& message) {
        setIdle(tr("Loading failed"));
        showError(message);
    });
    buildMenus();
}

void MainWindow::buildMenus()
{
    QMenu* file = menuBar()->addMenu(tr("&File"));
    file->addAction(tr("&Open…"), QKeySequence::Open, this, [this] {
        const QString path = QFileDialog::getOpenFileName(this, tr("Open capture"), {}, kCaptureFilter);
        if (!path.isEmpty())
            openCapture(path);
    });
    file->addAction(tr("&Compare…"), QKeySequence(tr("Ctrl+D")), this, &MainWindow::chooseCompare);
    recentMenu_ = file->addMenu(tr("Open &Recent"));
    rebuildRecentMenu();
    file->addSeparator();
    file->addAction(tr("Load &scaling results…"), this, [this] {
        const QString path = QFileDialog::getOpenFileName(this, tr("Scaling results"), {}, kCaptureFilter);
        if (!path.isEmpty())
            loadScaling(path);
    });
    file->addAction(tr("&Export report…"), QKeySequence(tr("Ctrl+E")), this, &MainWindow::chooseExport);
    file->addAction(tr("&Record…"), QKeySequence(tr("Ctrl+R")), this, [this] {
        auto* dialog = new RecordDialog(this);
        dialog->setAttribute(Qt::WA_DeleteOnClose);
        connect(dialog, &RecordDialog::recorded, this, &MainWindow::openCapture);
        dialog->open();
    });
    file->addSeparator();
    file->addAction(tr("&Quit"), QKeySequence::Quit, qApp, &QApplication::closeAllWindows);
    QMenu* help = menuBar()->addMenu(tr("&Help"));
    help->addAction(tr("&About"), this, [this] {
        QMessageBox::about(this, tr("About lockscope"),
                           tr("<b>lockscope %1</b><p>Kernel lock-contention profiler and visualizer.</p>"
                              "<p>License: GPL-2.0-or-later</p>")
                               .arg(QStringLiteral(LOCKSCOPE_VERSION)));
    });
}

bool MainWindow::busy() const noexcept
{
    return loader_->busy() || comparing_;
}

void MainWindow::setBusy(const QString& text)
{
    status_->setText(text);
    progress_->setVisible(true);
}

void MainWindow::setIdle(const QString& text)
{
    status_->setText(text);
    progress_->setVisible(false);
}

void MainWindow::showError(const QString& message)
{
    lastError_ = message;
    // Window-modal but non-blocking, so loading and tests keep running.
    auto* box = new QMessageBox(QMessageBox::Critical, tr("lockscope"), message, QMessageBox::Ok, this);
    box->setTextFormat(Qt::PlainText);
    box->setAttribute(Qt::WA_DeleteOnClose);
    box->open();
    emit errorShown(message);
}

void MainWindow::openCapture(const QString& path)
{
    baselineFiles_.clear();
    patchedFiles_.clear();
    setBusy(tr("Loading %1…").arg(path));
    loader_->load({path});
}

namespace {

QString sideName(const QString& arg, int runs)
{
    const QString name = QFileInfo(arg).fileName();
    return runs == 1 ? name : QObject::tr("%1 (%2 runs)").arg(name).arg(runs);
}

} // namespace

void MainWindow::compareCaptures(const QString& before, const QString& after)
{
    std::vector<std::string> baseline, patched;
    try {
        baseline = reports::expandCaptureArgs({before.toStdString()});
        patched = reports::expandCaptureArgs({after.toStdString()});
    } catch (const std::exception& e) {
        showError(QString::fromStdString(e.what()));
        return;
    }
    compareArgs_ = {before, after};
    baselineFiles_ = std::move(baseline);
    patchedFiles_ = std::move(patched);
    setBusy(tr("Loading %1 and %2…").arg(before, after));
    // The first run of each side stands for it in the flame graphs and histograms.
    loader_->load(
        { QString::fromStdString(baselineFiles_.front()), QString::fromStdString(patchedFiles_.front()) },
        CaptureLoader::Make::Read);
}

void MainWindow::onLoaded(const QStringList& paths, const std::vector<PreparedCapture>& captures)
{
    if (baselineFiles_.empty()) {
        capturePage_->setPrepared(captures.front());
        stack_->setCurrentWidget(capturePage_);
        compareMode_ = false;
        setWindowTitle(QFileInfo(paths.front()).fileName() + QStringLiteral(" — lockscope"));
        addRecent(paths.front());
        setIdle(tr("%1: %2 locks, %3 stacks")
                    .arg(paths.front())
                    .arg(captures.front().capture->locks.size())
                    .arg(captures.front().capture->stacks.size()));
        emit captureShown();
        return;
    }
    // The comparison engine can take a while on big captures: keep the UI live.
    comparing_ = true;
    setBusy(tr("Comparing…"));
    progress_->setRange(0, 0);
    const CapturePtr before = captures.at(0).capture;
    const CapturePtr after = captures.at(1).capture;
    const QStringList args = compareArgs_;
    const QString names = sideName(args[0], int(baselineFiles_.size())) + QStringLiteral(" ↔ ") +
                          sideName(args[1], int(patchedFiles_.size()));
    auto* watcher = new QFutureWatcher<CompareResult>(this);
    connect(
        watcher, &QFutureWatcher<CompareResult>::finished, this, [this, watcher, args, names, before, after] {
            watcher->deleteLater();
            comparing_ = false;
            const CompareResult r = watcher->result();
            if (!r.error.isEmpty()) {
                setIdle(tr("Comparison failed"));
                showError(r.error);
                return;
            }
            comparePage_->setComparison(r.comparison, before, after);
            stack_->setCurrentWidget(comparePage_);
            compareMode_ = true;
            setWindowTitle(names + QStringLiteral(" — lockscope"));
            addRecent(args[0] + kPairSeparator + args[1]);
            setIdle(tr("Compared %1 (before) with %2 (after): %3 locks")
                        .arg(args[0], args[1])
                        .arg(r.comparison->locks.size()));
            emit comparisonShown();
        });
    // Run sets are read again, each run folded into its side's pool as it
    // comes: memory holds the pools, not every run's capture. A pair is
    // compared from the captures already loaded. Each side's page (its call
    // tree and flame graph) is made when its tab is shown
    // (ComparePage::prepareSides), never beside the comparison's working memory.
    watcher->setFuture(QtConcurrent::run([base = baselineFiles_, patched = patchedFiles_, before, after,
                                          args]() -> CompareResult {
        try {
            const bool pair = base.size() == 1 && patched.size() == 1;
            CompareResult r;
            r.comparison = std::make_shared<const reports::Comparison>(pair
                    ? reports::compareSets(std::vector<const Capture*> { before.get() },
                        std::vector<const Capture*> { after.get() })
                    : reports::compareSetFiles(base, patched));
            returnFreedHeap();
            return r;
        } catch (const std::exception& e) {
            return { nullptr,
                tr("cannot compare %1 with %2: %3").arg(args[0], args[1], QString::fromStdString(e.what())) };
        }
    }));
}

bool MainWindow::loadScaling(const QString& path)
{
    try {
        auto charts = reports::readScalingFile(path.toStdString());
        ScalingView* view = comparePage_->scalingView();
        auto all = view->loadedByHand() ? view->charts() : std::vector<reports::ScalingChart>{};
        all.insert(all.end(), charts.begin(), charts.end());
        view->setCharts(std::move(all));
        scalingFiles_ << path;
        status_->setText(tr("Loaded %1 scaling chart(s) from %2").arg(charts.size()).arg(path));
        return true;
    } catch (const std::exception& e) {
        showError(QString::fromStdString(e.what()));
        return false;
    }
}

bool MainWindow::exportReport(const QString& path)
{
    const QString suffix = QFileInfo(path).suffix().toLower();
    reports::Format format = reports::Format::Html;
    if (suffix == QLatin1String("md") || suffix == QLatin1String("markdown"))
        format = reports::Format::Markdown;
    else if (suffix == QLatin1String("txt"))
        format = reports::Format::Text;
    else if (suffix == QLatin1String("json"))
        format = reports::Format::Json;
    else if (suffix != QLatin1String("html") && suffix != QLatin1String("htm")) {
        showError(tr("%1: unknown report format; use .html, .md, .txt or .json").arg(path));
        return false;
    }
    try {
        std::string text;
        reports::RenderExtras extras;
        extras.scaling = comparePage_->scalingView()->charts();
        if (compareMode_ && comparePage_->comparison())
            text = reports::render(*comparePage_->comparison(), format, extras);
        else if (!compareMode_ && capturePage_->capture())
            text = reports::render(fullReport(*capturePage_->capture()), format, extras);
        else {
            showError(tr("Nothing to export: open or compare captures first"));
            return false;
        }
        util::writeFileAtomic(path.toStdString(), text); // 0600: reports name kernel addresses
        status_->setText(tr("Exported %1").arg(path));
        return true;
    } catch (const std::exception& e) {
        showError(QString::fromStdString(e.what()));
        return false;
    }
}

void MainWindow::chooseCompare()
{
    const QString before =
        QFileDialog::getOpenFileName(this, tr("Compare: baseline (before) capture"), {}, kCaptureFilter);
    if (before.isEmpty())
        return;
    const QString after = QFileDialog::getOpenFileName(this, tr("Compare: patched (after) capture"),
                                                       QFileInfo(before).absolutePath(), kCaptureFilter);
    if (!after.isEmpty())
        compareCaptures(before, after);
}

void MainWindow::chooseExport()
{
    const QString path = QFileDialog::getSaveFileName(this, tr("Export report"), QStringLiteral("lockscope-report.html"),
                                                      tr("HTML (*.html);;Markdown (*.md);;Text (*.txt);;JSON (*.json)"));
    if (!path.isEmpty())
        exportReport(path);
}

QStringList MainWindow::recentFiles() const
{
    return QSettings().value(kRecentKey).toStringList();
}

void MainWindow::addRecent(const QString& entry)
{
    QStringList list = recentFiles();
    list.removeAll(entry);
    list.prepend(entry);
    while (list.size() > kMaxRecent)
        list.removeLast();
    QSettings().setValue(kRecentKey, list);
    rebuildRecentMenu();
}

void MainWindow::rebuildRecentMenu()
{
    recentMenu_->clear();
    const QStringList list = recentFiles();
    for (const QString& entry : list) {
        const QStringList parts = entry.split(kPairSeparator);
        const QString text = parts.size() == 2 ? tr("Compare %1 ↔ %2").arg(parts[0], parts[1]) : entry;
        recentMenu_->addAction(text, this, [this, entry] { openRecent(entry); });
    }
    recentMenu_->setEnabled(!list.isEmpty());
}

void MainWindow::openRecent(const QString& entry)
{
    const QStringList parts = entry.split(kPairSeparator);
    if (parts.size() == 2)
        compareCaptures(parts[0], parts[1]);
    else
        openCapture(entry);
}

void MainWindow::dragEnterEvent(QDragEnterEvent* event)
{
    const auto urls = event->mimeData()->urls();
    if (!urls.isEmpty() && urls.size() <= 2 && urls.front().isLocalFile())
        event->acceptProposedAction();
}

void MainWindow::dropEvent(QDropEvent* event)
{
    QStringList paths;
    for (const QUrl& url : event->mimeData()->urls()) {
        if (url.isLocalFile())
            paths << url.toLocalFile();
    }
    if (paths.size() == 1)
        openCapture(paths[0]);
    else if (paths.size() == 2)
        compareCaptures(paths[0], paths[1]);
    event->acceptProposedAction();
}

} // namespace lockscope::gui
