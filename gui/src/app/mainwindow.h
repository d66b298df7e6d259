// SPDX-License-Identifier: GPL-2.0-or-later
#pragma once

#include <memory>

#include <QMainWindow>
#include <QStringList>

#include "app/captureloader.h"
#include "lockscope/reports/compare.h"

class QLabel;
class QMenu;
class QProgressBar;
class QStackedWidget;

namespace lockscope::gui {

class CapturePage;
class ComparePage;

class MainWindow final : public QMainWindow {
    Q_OBJECT
public:
    explicit MainWindow(QWidget* parent = nullptr);

    void openCapture(const QString& path);
    // before and after are capture files, or directories of runs (every
    // *.lockscope.json inside): run sets are compared with run statistics.
    void compareCaptures(const QString& before, const QString& after);
    // Reference scaling curves shown beside the comparison; false + error dialog on bad input.
    bool loadScaling(const QString& path);
    // Renders the current view's report with reports::render (format from the suffix:
    // .html, .md, .txt, .json). Returns false and shows the error on failure.
    bool exportReport(const QString& path);

    CapturePage* capturePage() const noexcept { return capturePage_; }
    ComparePage* comparePage() const noexcept { return comparePage_; }
    bool inCompareMode() const noexcept { return compareMode_; }
    bool busy() const noexcept;
    QString lastError() const { return lastError_; }
    QStringList recentFiles() const;

signals:
    void captureShown();
    void comparisonShown();
    void errorShown(const QString& message);

protected:
    void dragEnterEvent(QDragEnterEvent* event) override;
    void dropEvent(QDropEvent* event) override;

private:
    void buildMenus();
    void showError(const QString& message);
    void onLoaded(const QStringList& paths, const std::vector<PreparedCapture>& captures);
    void addRecent(const QString& entry);
    void rebuildRecentMenu();
    void openRecent(const QString& entry);
    void setBusy(const QString& text);
    void setIdle(const QString& text);
    void chooseCompare();
    void chooseExport();

    CaptureLoader* loader_ = nullptr;
    QStackedWidget* stack_ = nullptr;
    CapturePage* capturePage_ = nullptr;
    ComparePage* comparePage_ = nullptr;
    QMenu* recentMenu_ = nullptr;
    QProgressBar* progress_ = nullptr;
    QLabel* status_ = nullptr;
    bool compareMode_ = false;
    bool comparing_ = false;
    // The comparison the loader is reading for: its two arguments and how many
    // of the loaded captures are the baseline's runs (0: a single capture).
    QStringList compareArgs_;
    // The run sets being compared (empty when one capture is opened): only
    // each side's first run is prepared for the pages, every run is folded
    // into the comparison as it is read (reports::compareSetFiles).
    std::vector<std::string> baselineFiles_, patchedFiles_;
    QString lastError_;
    QStringList scalingFiles_;
};

} // namespace lockscope::gui
