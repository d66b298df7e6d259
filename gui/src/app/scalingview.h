// SPDX-License-Identifier: GPL-2.0-or-later
#pragma once

#include <vector>

#include <QWidget>

#include "lockscope/reports/scaling.h"

class QGridLayout;
class QLabel;

namespace lockscope::gui {

// Throughput against threads for each before/after pair of the reference
// lock implementations (the samples' scaling results, read by reports/).
class ScalingView final : public QWidget {
    Q_OBJECT
public:
    explicit ScalingView(QWidget* parent = nullptr);
    void setCharts(std::vector<reports::ScalingChart> charts);
    const std::vector<reports::ScalingChart>& charts() const noexcept { return charts_; }

private:
    std::vector<reports::ScalingChart> charts_;
    QGridLayout* grid_ = nullptr;
    QLabel* hint_ = nullptr;
};

} // namespace lockscope::gui
