// SPDX-License-Identifier: GPL-2.0-or-later
#include "app/histogramchart.h"

#include <algorithm>

#include <QBarCategoryAxis>
#include <QBarSeries>
#include <QBarSet>
#include <QChart>
#include <QValueAxis>

#include "model/units.h"

namespace lockscope::gui {

HistogramChart::HistogramChart(const QString& title, QWidget* parent) : QChartView(parent), title_(title)
{
    setRenderHint(QPainter::Antialiasing);
    setMinimumSize(280, 200);
    rebuild();
}

void HistogramChart::setSeries(QList<HistogramSeries> series)
{
    series_ = std::move(series);
    rebuild();
}

void HistogramChart::setNormalized(bool normalized)
{
    if (normalized == normalized_)
        return;
    normalized_ = normalized;
    rebuild();
}

void HistogramChart::rebuild()
{
    auto* chart = new QChart;
    chart->setTitle(title_);
    chart->setAnimationOptions(QChart::NoAnimation);
    chart->legend()->setVisible(series_.size() > 1);
    chart->legend()->setAlignment(Qt::AlignBottom);
    chart->setMargins(QMargins(4, 4, 4, 4));

    // Only the buckets between the first and last filled one on any side.
    unsigned first = Log2Hist::kBuckets;
    unsigned last = 0;
    for (const auto& s : series_) {
        const auto& b = s.hist.buckets();
        for (unsigned i = 0; i < Log2Hist::kBuckets; ++i) {
            if (b[i]) {
                first = std::min(first, i);
                last = std::max(last, i);
            }
        }
    }
    if (first > last) {
        range_ = {0, -1};
        chart->setTitle(title_ + tr(" — no events"));
        install(chart);
        return;
    }
    range_ = {first, static_cast<int>(last)};

    auto* bars = new QBarSeries;
    double ymax = 0.0;
    for (const auto& s : series_) {
        auto* set = new QBarSet(s.name + QStringLiteral(" (n=") + formatCount(s.hist.count()) + QLatin1Char(')'));
        set->setColor(s.color);
        set->setBorderColor(s.color.darker(130));
        const double n = static_cast<double>(std::max<uint64_t>(1, s.hist.count()));
        for (unsigned i = first; i <= last; ++i) {
            const double v = static_cast<double>(s.hist.bucket(i));
            const double y = normalized_ ? 100.0 * v / n : v;
            ymax = std::max(ymax, y);
            set->append(y);
        }
        bars->append(set);
    }
    bars->setBarWidth(0.9);
    chart->addSeries(bars);

    QStringList categories;
    for (unsigned i = first; i <= last; ++i)
        categories << bucketLabel(i);
    auto* x = new QBarCategoryAxis;
    x->append(categories);
    x->setLabelsAngle(-90);
    QFont small = x->labelsFont();
    small.setPointSizeF(small.pointSizeF() * 0.8);
    x->setLabelsFont(small);
    x->setTitleText(tr("duration (log2 buckets, lower bound)"));
    auto* y = new QValueAxis;
    y->setRange(0.0, ymax > 0 ? ymax * 1.05 : 1.0);
    y->setLabelFormat(normalized_ ? QStringLiteral("%.0f%%") : QStringLiteral("%.0f"));
    y->setTitleText(normalized_ ? tr("share of events") : tr("events"));
    chart->addAxis(x, Qt::AlignBottom);
    chart->addAxis(y, Qt::AlignLeft);
    bars->attachAxis(x);
    bars->attachAxis(y);

    install(chart);
}

void HistogramChart::install(QChart* chart)
{
    // setChart() releases the previous chart without deleting it.
    QChart* old = this->chart();
    setChart(chart);
    delete old;
}

} // namespace lockscope::gui
