// SPDX-License-Identifier: GPL-2.0-or-later
#pragma once

#include <string>
#include <vector>

#include <QObject>
#include <QProcess>
#include <QString>

#include "lockscope/reports/scaling.h"

namespace lockscope::gui {

// The reference pair of a seed workload (samples/scaling): this machine's own
// measurement when one was made (cached), else the results shipped with the
// app (gui/data/reference-scaling.json, every pair, built into the binary).
struct ReferenceCharts {
    std::vector<reports::ScalingChart> charts;
    bool measuredHere = false;
    QString pairId;  // empty: no pair models the workload
};

// $XDG_CACHE_HOME/lockscope/scaling (~/.cache/lockscope/scaling).
QString scalingCacheDir();
// The cached measurement of workload's pair.
QString cachedScalingPath(const QString& workload);
ReferenceCharts findReference(const std::string& workload);
// lockscope-scaling next to the app (installed, or the build tree's
// samples/scaling), else on PATH; empty when there is none.
QString findScalingHarness();

// One run of the scaling harness for one pair, in the background: progress
// from its "point k/n" lines, Cancel, and the result moved into the cache
// only when the harness succeeded (never a half-written file there).
class ScalingMeasurement final : public QObject {
    Q_OBJECT
public:
    explicit ScalingMeasurement(QObject* parent = nullptr);
    ~ScalingMeasurement() override;
    // Extra harness arguments, e.g. a short --duration (tests).
    void setExtraArguments(QStringList args) { extra_ = std::move(args); }
    void setHarness(QString path) { harness_ = std::move(path); }
    QString harness() const { return harness_; }
    bool running() const { return process_.state() != QProcess::NotRunning; }
    void start(const QString& pairId, const QString& workload);
    void cancel();

signals:
    void progress(int done, int total);
    void finished(const QString& cachePath);
    void failed(const QString& message);

private:
    void readProgress();
    void done(int exitCode, QProcess::ExitStatus status);

    QProcess process_;
    QString harness_, partial_, target_, lastLine_;
    QStringList extra_;
    bool cancelled_ = false;
};

} // namespace lockscope::gui
