// SPDX-License-Identifier: GPL-2.0-or-later
#pragma once

#include <string>
#include <vector>

#include <QWidget>

#include "lockscope/reports/scaling.h"

class QGridLayout;
class QLabel;
class QProgressBar;
class QPushButton;

namespace lockscope::gui {

class ScalingMeasurement;

// Throughput against threads for each before/after pair of the reference
// lock implementations (the samples' scaling results, read by reports/).
// Without results loaded by hand, it shows the pair that models the
// compared captures' workload (referencescaling.h) and can measure it on
// this machine.
class ScalingView final : public QWidget {
    Q_OBJECT
public:
    explicit ScalingView(QWidget* parent = nullptr);
    // Results the user loaded (--scaling, File menu): shown as they are.
    void setCharts(std::vector<reports::ScalingChart> charts);
    // The reference pair of this workload, unless results were loaded by hand.
    void showReference(const std::string& workload);
    const std::vector<reports::ScalingChart>& charts() const noexcept { return charts_; }
    bool loadedByHand() const noexcept { return loadedByHand_; }
    ScalingMeasurement* measurement() const noexcept { return measurement_; }
    QString sourceText() const;
    bool canMeasure() const;

signals:
    void measurementEnded();

private:
    void showCharts(std::vector<reports::ScalingChart> charts);
    void startMeasuring();
    void measuringEnded(const QString& message);

    std::vector<reports::ScalingChart> charts_;
    std::string workload_;
    QString pairId_;
    bool loadedByHand_ = false;
    QGridLayout* grid_ = nullptr;
    QLabel* hint_ = nullptr;
    QLabel* source_ = nullptr;
    QPushButton* measure_ = nullptr;
    QPushButton* cancel_ = nullptr;
    QProgressBar* progress_ = nullptr;
    ScalingMeasurement* measurement_ = nullptr;
};

} // namespace lockscope::gui
