// SPDX-License-Identifier: GPL-2.0-or-later
#include "app/referencescaling.h"

#include <QCoreApplication>
#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QRegularExpression>
#include <QStandardPaths>

namespace lockscope::gui {

namespace {

const QString kShipped = QStringLiteral(":/lockscope/reference-scaling.json");

std::vector<reports::ScalingChart> shippedCharts()
{
    QFile f(kShipped);
    if (!f.open(QIODevice::ReadOnly))
        return {};
    const QByteArray text = f.readAll();
    return reports::parseScalingText(std::string_view(text.constData(), static_cast<size_t>(text.size())),
                                     kShipped.toStdString());
}

} // namespace

QString scalingCacheDir()
{
    QString base = qEnvironmentVariable("XDG_CACHE_HOME");
    if (base.isEmpty())
        base = QDir::homePath() + QStringLiteral("/.cache");
    return base + QStringLiteral("/lockscope/scaling");
}

QString cachedScalingPath(const QString& workload)
{
    return scalingCacheDir() + QLatin1Char('/') + workload + QStringLiteral(".json");
}

ReferenceCharts findReference(const std::string& workload)
{
    ReferenceCharts out;
    if (workload.empty())
        return out;
    const std::vector<reports::ScalingChart> shipped = reports::chartsForWorkload(shippedCharts(), workload);
    if (!shipped.empty())
        out.pairId = QString::fromStdString(shipped.front().pair_id);
    const QString cached = cachedScalingPath(QString::fromStdString(workload));
    if (QFileInfo::exists(cached)) {
        try {
            out.charts = reports::chartsForWorkload(reports::readScalingFile(cached.toStdString()), workload);
            out.measuredHere = !out.charts.empty();
        } catch (const std::exception&) {
            // A damaged cache entry is ignored: the shipped results stand and Measure rewrites it.
        }
    }
    if (!out.measuredHere)
        out.charts = shipped;
    return out;
}

QString findScalingHarness()
{
    const QString dir = QCoreApplication::applicationDirPath();
    const QString name = QStringLiteral("lockscope-scaling");
    for (const QString& candidate : {dir + QLatin1Char('/') + name, dir + QStringLiteral("/../samples/scaling/") + name})
        if (QFileInfo(candidate).isExecutable())
            return QFileInfo(candidate).canonicalFilePath();
    return QStandardPaths::findExecutable(name);
}

ScalingMeasurement::ScalingMeasurement(QObject* parent) : QObject(parent), harness_(findScalingHarness())
{
    process_.setProcessChannelMode(QProcess::SeparateChannels);
    process_.setStandardOutputFile(QProcess::nullDevice());
    process_.setReadChannel(QProcess::StandardError); // its progress lines
    connect(&process_, &QProcess::readyReadStandardError, this, &ScalingMeasurement::readProgress);
    connect(&process_, &QProcess::finished, this, &ScalingMeasurement::done);
    connect(&process_, &QProcess::errorOccurred, this, [this](QProcess::ProcessError e) {
        if (e == QProcess::FailedToStart)
            emit failed(tr("cannot run %1: %2").arg(harness_, process_.errorString()));
    });
}

ScalingMeasurement::~ScalingMeasurement()
{
    if (running()) {
        process_.kill();
        process_.waitForFinished(3000);
        QFile::remove(partial_);
    }
}

void ScalingMeasurement::start(const QString& pairId, const QString& workload)
{
    if (running())
        return;
    if (harness_.isEmpty()) {
        emit failed(tr("lockscope-scaling was not found next to the app or on PATH"));
        return;
    }
    if (!QDir().mkpath(scalingCacheDir())) {
        emit failed(tr("cannot create %1").arg(scalingCacheDir()));
        return;
    }
    target_ = cachedScalingPath(workload);
    partial_ = target_ + QStringLiteral(".partial");
    cancelled_ = false;
    lastLine_.clear();
    process_.start(harness_, QStringList{QStringLiteral("--pairs"), pairId, QStringLiteral("--no-profile"),
                                         QStringLiteral("--output"), partial_} + extra_);
}

void ScalingMeasurement::cancel()
{
    if (!running())
        return;
    cancelled_ = true;
    process_.kill();
}

void ScalingMeasurement::readProgress()
{
    static const QRegularExpression point(QStringLiteral("point (\\d+)/(\\d+)"));
    while (process_.canReadLine()) {
        const QString line = QString::fromUtf8(process_.readLine()).trimmed();
        if (line.isEmpty())
            continue;
        lastLine_ = line;
        if (const auto m = point.match(line); m.hasMatch())
            emit progress(m.captured(1).toInt(), m.captured(2).toInt());
    }
}

void ScalingMeasurement::done(int exitCode, QProcess::ExitStatus status)
{
    readProgress();
    if (cancelled_ || status != QProcess::NormalExit || exitCode != 0) {
        QFile::remove(partial_);
        emit failed(cancelled_ ? tr("Measurement cancelled")
                               : tr("lockscope-scaling failed (exit %1): %2").arg(exitCode).arg(lastLine_));
        return;
    }
    QFile::remove(target_);
    if (!QFile::rename(partial_, target_)) {
        emit failed(tr("cannot move %1 to %2").arg(partial_, target_));
        return;
    }
    emit finished(target_);
}

} // namespace lockscope::gui
