// SPDX-License-Identifier: GPL-2.0-or-later
#pragma once

#include <string>
#include <vector>

// Scaling curves (throughput against threads/CPUs) shown beside a report or
// comparison. The renderers only need named (x, y) series; scaling_input.cpp
// converts the samples' scaling JSON (docs/scaling-format.md) into this.
namespace lockscope::reports {

struct ScalingPoint {
    double x = 0.0;
    double y = 0.0;
    bool operator==(const ScalingPoint&) const = default;
};

struct ScalingSeries {
    std::string name;                 // "baseline", "patched", "ticket-lock", ...
    std::vector<ScalingPoint> points; // x ascending
    bool operator==(const ScalingSeries&) const = default;
};

struct ScalingChart {
    std::string title;                // benchmark name
    std::string x_label = "threads";
    std::string y_label = "ops/s";
    std::vector<ScalingSeries> series;
    bool operator==(const ScalingChart&) const = default;
};

// Reads one scaling results file (the samples' format). Throws
// std::runtime_error with one line "<path>: <problem>" on bad input.
std::vector<ScalingChart> readScalingFile(const std::string& path);

} // namespace lockscope::reports
