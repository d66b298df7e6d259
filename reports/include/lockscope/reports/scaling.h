// SPDX-License-Identifier: GPL-2.0-or-later
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "lockscope/capture/capture.h"

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
    std::string pair_id;              // the reference pair ("posix-timer-lookup"), when from a scaling file
    std::string workload;             // the samples workload measuring the same change on a kernel
    std::string measured_on;          // "host (CPU model, N CPUs), creation time (ISO 8601)"
    bool operator==(const ScalingChart&) const = default;
};

// Reads one scaling results file (the samples' format). Throws
// std::runtime_error with one line "<path>: <problem>" on bad input.
std::vector<ScalingChart> readScalingFile(const std::string& path);
// The same from text already read; name stands for the path in errors.
std::vector<ScalingChart> parseScalingText(std::string_view text, const std::string& name);

// The program a capture's record ran as its workload, by file name
// ("timer-stress"); empty when it followed a running process.
std::string workloadProgram(const Capture& capture);

// The charts of the reference pairs that model workload.
std::vector<ScalingChart> chartsForWorkload(const std::vector<ScalingChart>& charts, std::string_view workload);

} // namespace lockscope::reports
