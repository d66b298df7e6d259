// SPDX-License-Identifier: GPL-2.0-or-later
#include "app/scalingview.h"

#include <algorithm>

#include <QChart>
#include <QChartView>
#include <QGridLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineSeries>
#include <QProgressBar>
#include <QPushButton>
#include <QScatterSeries>
#include <QValueAxis>
#include <QVBoxLayout>

#include "app/referencescaling.h"

namespace lockscope::gui {

ScalingView::ScalingView(QWidget* parent) : QWidget(parent)
{
    auto* layout = new QVBoxLayout(this);
    hint_ = new QLabel(tr("No scaling results loaded. Use File → Load scaling results… (or --scaling FILE) "
                          "with the JSON the samples' scaling runner writes."));
    hint_->setWordWrap(true);
    layout->addWidget(hint_);
    auto* bar = new QHBoxLayout;
    source_ = new QLabel;
    source_->setWordWrap(true);
    measure_ = new QPushButton(tr("Measure on this machine"));
    progress_ = new QProgressBar;
    cancel_ = new QPushButton(tr("Cancel"));
    bar->addWidget(source_, 1);
    bar->addWidget(progress_);
    bar->addWidget(cancel_);
    bar->addWidget(measure_);
    layout->addLayout(bar);
    measure_->hide();
    progress_->hide();
    cancel_->hide();
    grid_ = new QGridLayout;
    layout->addLayout(grid_, 1);

    measurement_ = new ScalingMeasurement(this);
    connect(measure_, &QPushButton::clicked, this, &ScalingView::startMeasuring);
    connect(cancel_, &QPushButton::clicked, measurement_, &ScalingMeasurement::cancel);
    connect(measurement_, &ScalingMeasurement::progress, this, [this](int done, int total) {
        progress_->setRange(0, total);
        progress_->setValue(done);
    });
    connect(measurement_, &ScalingMeasurement::finished, this, [this] { measuringEnded({}); });
    connect(measurement_, &ScalingMeasurement::failed, this, &ScalingView::measuringEnded);
}

void ScalingView::setCharts(std::vector<reports::ScalingChart> charts)
{
    loadedByHand_ = true;
    workload_.clear();
    pairId_.clear();
    source_->clear();
    measure_->hide();
    showCharts(std::move(charts));
}

void ScalingView::showReference(const std::string& workload)
{
    if (loadedByHand_ || measurement_->running())
        return;
    workload_ = workload;
    const ReferenceCharts ref = findReference(workload);
    pairId_ = ref.pairId;
    const QString w = QString::fromStdString(workload);
    if (ref.charts.empty())
        source_->setText(workload.empty() ? QString()
                                          : tr("No reference pair models the workload %1.").arg(w));
    else
        source_->setText((ref.measuredHere ? tr("Reference pair for %1, measured on this machine: %2")
                                           : tr("Reference pair for %1, shipped with lockscope (measured on %2); "
                                                "this machine may scale differently."))
                             .arg(w, QString::fromStdString(ref.charts.front().measured_on)));
    measure_->setVisible(!pairId_.isEmpty());
    measure_->setEnabled(canMeasure());
    measure_->setToolTip(measurement_->harness().isEmpty()
                             ? tr("lockscope-scaling was not found next to the app or on PATH")
                             : tr("Runs %1 --pairs %2 in the background").arg(measurement_->harness(), pairId_));
    showCharts(ref.charts);
}

QString ScalingView::sourceText() const
{
    return source_->text();
}

bool ScalingView::canMeasure() const
{
    return !pairId_.isEmpty() && !measurement_->harness().isEmpty() && !measurement_->running();
}

void ScalingView::startMeasuring()
{
    if (!canMeasure())
        return;
    progress_->setRange(0, 0); // busy until the first point
    progress_->show();
    cancel_->show();
    measure_->setEnabled(false);
    source_->setText(tr("Measuring %1 on this machine…").arg(pairId_));
    measurement_->start(pairId_, QString::fromStdString(workload_));
}

void ScalingView::measuringEnded(const QString& message)
{
    progress_->hide();
    cancel_->hide();
    showReference(workload_);
    if (!message.isEmpty())
        source_->setText(message + QStringLiteral(". ") + source_->text());
    emit measurementEnded();
}

void ScalingView::showCharts(std::vector<reports::ScalingChart> charts)
{
    charts_ = std::move(charts);
    while (QLayoutItem* item = grid_->takeAt(0)) {
        delete item->widget();
        delete item;
    }
    hint_->setVisible(charts_.empty());
    static const QColor palette[] = {QColor(0x31, 0x82, 0xbd), QColor(0xe6, 0x55, 0x0d), QColor(0x31, 0xa3, 0x54),
                                     QColor(0x75, 0x6b, 0xb1), QColor(0x63, 0x63, 0x63)};
    int slot = 0;
    for (const auto& c : charts_) {
        auto* chart = new QChart;
        chart->setTitle(QString::fromStdString(c.title));
        chart->setAnimationOptions(QChart::NoAnimation);
        chart->legend()->setAlignment(Qt::AlignBottom);
        auto* x = new QValueAxis;
        auto* y = new QValueAxis;
        x->setTitleText(QString::fromStdString(c.x_label));
        y->setTitleText(QString::fromStdString(c.y_label));
        y->setLabelFormat(QStringLiteral("%.3g"));
        chart->addAxis(x, Qt::AlignBottom);
        chart->addAxis(y, Qt::AlignLeft);
        double xmax = 1.0, ymax = 1.0;
        size_t i = 0;
        for (const auto& s : c.series) {
            auto* line = new QLineSeries;
            line->setName(QString::fromStdString(s.name));
            QPen pen(palette[i++ % std::size(palette)]);
            pen.setWidth(2);
            line->setPen(pen);
            for (const auto& p : s.points) {
                line->append(p.x, p.y);
                xmax = std::max(xmax, p.x);
                ymax = std::max(ymax, p.y);
            }
            line->setPointsVisible(true);
            chart->addSeries(line);
            line->attachAxis(x);
            line->attachAxis(y);
        }
        x->setRange(0.0, xmax);
        y->setRange(0.0, ymax * 1.1);
        auto* view = new QChartView(chart);
        view->setRenderHint(QPainter::Antialiasing);
        view->setMinimumSize(320, 240);
        grid_->addWidget(view, slot / 2, slot % 2);
        ++slot;
    }
}

} // namespace lockscope::gui
