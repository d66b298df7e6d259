// SPDX-License-Identifier: GPL-2.0-or-later
#pragma once

#include <QChartView>
#include <QColor>
#include <QList>

#include "lockscope/capture/histogram.h"

namespace lockscope::gui {

struct HistogramSeries {
    QString name;
    Log2Hist hist;
    QColor color;
};

// A log2 latency histogram as a bar chart (Qt Charts). Several series are
// drawn side by side per bucket, so a before/after pair overlays bucket by
// bucket; normalized shows each series' share of its own events, which makes
// runs with different event counts comparable.
class HistogramChart final : public QChartView {
    Q_OBJECT
public:
    explicit HistogramChart(const QString& title, QWidget* parent = nullptr);

    void setSeries(QList<HistogramSeries> series);
    void setNormalized(bool normalized);
    void setTitle(const QString& title) { title_ = title; }
    bool normalized() const noexcept { return normalized_; }
    const QList<HistogramSeries>& series() const noexcept { return series_; }
    const QString& title() const noexcept { return title_; }
    // The bucket range on the x axis, [first, last]; {0, -1} when empty.
    std::pair<unsigned, int> bucketRange() const noexcept { return range_; }

private:
    void rebuild();
    void install(QChart* chart);

    QString title_;
    QList<HistogramSeries> series_;
    bool normalized_ = false;
    std::pair<unsigned, int> range_{0, -1};
};

} // namespace lockscope::gui
