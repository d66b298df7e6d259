// SPDX-License-Identifier: GPL-2.0-or-later
#include "app/captureloader.h"

#include <future>
#include <tuple>

#include <QFileInfo>
#include <QFutureWatcher>
#include <QThreadPool>
#include <QtConcurrent/QtConcurrentRun>

#include "lockscope/capture/io.h"
#include "lockscope/reports/input.h"

namespace lockscope::gui {

PreparedCapture prepareCapture(CapturePtr capture)
{
    PreparedCapture p;
    p.capture = std::move(capture);
    if (!p.capture)
        return p;
    // The report and the tree only read the capture: made at once, they
    // open a big capture on two cores instead of one. The flame graph of the
    // top-down tree is 333k nodes for a 100k-stack capture: made here rather
    // than on the UI thread when the page opens.
    auto topDown = std::async(std::launch::async, [capture = p.capture] {
        auto t = std::make_shared<const CallTree>(CallTree::forCapture(*capture, TreeDirection::TopDown));
        return std::pair(t, std::make_shared<const FlameData>(flameFromCallTree(t, FlameWeight::Wait)));
    });
    reports::ReportOptions options;
    options.lock_rows = false;
    p.report = std::make_shared<const reports::Report>(reports::buildReport(*p.capture, options));
    std::tie(p.topDown, p.flame) = topDown.get();
    return p;
}

reports::Report fullReport(const Capture& capture)
{
    reports::ReportOptions options;
    options.top = 0;
    return reports::buildReport(capture, options);
}

CaptureLoader::CaptureLoader(QObject* parent) : QObject(parent) {}

CaptureLoader::~CaptureLoader()
{
    // Running reads hold no pointer to this object (the watcher is a child and
    // is destroyed with it); wait so no worker outlives the application.
    QThreadPool::globalInstance()->waitForDone();
}

void CaptureLoader::load(const QStringList& paths, Make make)
{
    const unsigned generation = ++generation_;
    paths_ = paths;
    results_.assign(static_cast<size_t>(paths.size()), Result{});
    pending_ = static_cast<int>(paths.size());
    emit progress(0, pending_, QFileInfo(paths.value(0)).fileName());
    for (int slot = 0; slot < paths.size(); ++slot) {
        const std::string path = paths[slot].toStdString();
        auto* watcher = new QFutureWatcher<Result>(this);
        connect(watcher, &QFutureWatcher<Result>::finished, this, [this, watcher, generation, slot] {
            watcher->deleteLater();
            finishOne(generation, slot, watcher->result());
        });
        watcher->setFuture(QtConcurrent::run([path, make]() -> Result {
            try {
                auto capture = std::make_shared<const Capture>(reports::loadCapture(path));
                if (make == Make::Read)
                    return { PreparedCapture { std::move(capture), {}, {}, {} }, {} };
                return { prepareCapture(std::move(capture)), {} };
            } catch (const std::exception& e) {
                // loadCapture's messages already name the file.
                return {{}, QString::fromStdString(e.what())};
            }
        }));
    }
}

void CaptureLoader::finishOne(unsigned generation, int slot, Result result)
{
    if (generation != generation_)
        return;
    results_[static_cast<size_t>(slot)] = std::move(result);
    --pending_;
    const int total = static_cast<int>(paths_.size());
    emit progress(total - pending_, total, QFileInfo(paths_[slot]).fileName());
    if (pending_ > 0)
        return;
    std::vector<PreparedCapture> captures;
    for (const auto& r : results_) {
        if (!r.error.isEmpty()) {
            emit failed(r.error);
            return;
        }
        captures.push_back(r.capture);
    }
    results_.clear();
    emit loaded(paths_, captures);
}

} // namespace lockscope::gui
