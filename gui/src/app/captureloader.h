// SPDX-License-Identifier: GPL-2.0-or-later
#pragma once

#include <memory>
#include <vector>

#include <QObject>
#include <QStringList>

#include "lockscope/capture/calltree.h"
#include "lockscope/capture/capture.h"
#include "lockscope/reports/report.h"
#include "model/flamedata.h"

namespace lockscope::gui {

using CapturePtr = std::shared_ptr<const Capture>;

// A capture with what its views need for "all locks", computed on a worker
// thread so a big capture does not freeze the window while it is shown.
struct PreparedCapture {
    CapturePtr capture;
    std::shared_ptr<const reports::Report> report;  // the summary's: no lock rows (fullReport has them)
    std::shared_ptr<const CallTree> topDown;        // all locks (bottom-up: CapturePage makes it when shown)
    std::shared_ptr<const FlameData> flame;         // topDown, widths = wait (what the page opens on)
};

// Thread-safe; the heavy part of showing a capture.
PreparedCapture prepareCapture(CapturePtr capture);

// The report with every lock's row, paths and holders (what Export writes):
// made when asked for, as the page shows none of them.
reports::Report fullReport(const Capture& capture);

// Reads capture files on the thread pool (lockscope::readCapture) and
// prepares them, all of a request in parallel, and reports back on the UI
// thread. A newer request
// supersedes an older one still running: its results are dropped.
class CaptureLoader final : public QObject {
    Q_OBJECT
public:
    explicit CaptureLoader(QObject* parent = nullptr);
    ~CaptureLoader() override;

    // Prepared: each capture as prepareCapture makes it. Read: the captures
    // only, for a comparison, which prepares its pages once its own working
    // memory is gone (MainWindow::onLoaded).
    enum class Make { Prepared, Read };
    void load(const QStringList& paths, Make make = Make::Prepared);
    bool busy() const noexcept { return pending_ > 0; }

signals:
    void progress(int done, int total, const QString& current);
    // captures are in the order of the request's paths.
    void loaded(const QStringList& paths, const std::vector<lockscope::gui::PreparedCapture>& captures);
    // The reader's one-line message ("<path>: <problem>").
    void failed(const QString& message);

private:
    struct Result {
        PreparedCapture capture;
        QString error;
    };
    void finishOne(unsigned generation, int slot, Result result);

    unsigned generation_ = 0;
    int pending_ = 0;
    QStringList paths_;
    std::vector<Result> results_;
};

} // namespace lockscope::gui
