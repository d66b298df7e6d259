// SPDX-License-Identifier: GPL-2.0-or-later
#include "app/scalingview.h"

#include <algorithm>

#include <QChart>
#include <QChartView>
#include <QGridLayout>
#include <QLabel>
#include <QLineSeries>
#include <QScatterSeries>
#include <QValueAxis>
#include <QVBoxLayout>

namespace lockscope::gui {

ScalingView::ScalingView(QWidget* parent) : QWidget(parent)
{
    auto* layout = new QVBoxLayout(this);
    hint_ = new QLabel(tr("No scaling results loaded. Use File → Load scaling results… (or --scaling FILE) "
                          "with the JSON the samples' scaling runner writes."));
    hint_->setWordWrap(true);
    layout->addWidget(hint_);
    grid_ = new QGridLayout;
    layout->addLayout(grid_, 1);
}

void ScalingView::setCharts(std::vector<reports::ScalingChart> charts)
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
