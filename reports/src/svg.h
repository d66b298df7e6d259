// SPDX-License-Identifier: GPL-2.0-or-later
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "lockscope/capture/histogram.h"
#include "lockscope/reports/scaling.h"

// Inline SVG pieces for the self-contained HTML pages.
namespace lockscope::reports::svg {

// Log2 histogram bars; with `after`, the two are overlaid (before blue,
// after red). Two renderings are emitted, class "abs" (counts) and class
// "norm" (each side as a share of its own events); the page's normalize
// toggle shows one or the other.
std::string histogram(const Log2Hist& before, const Log2Hist* after, const std::string& title);

// A flame graph node: before/after weights (equal for a single capture).
struct FlameNode {
    std::string label;
    double before = 0.0;
    double after = 0.0;
    std::vector<uint32_t> children;
};

// Whether a frame weighing `weight` is drawn in a flame graph whose root
// weighs `root` (half a pixel wide at least): one too narrow hides its callees.
bool flameFrameDrawn(double weight, double root);

// Root (nodes[0]) at the bottom. Widths are before + after, so frames that
// vanished stay visible; with diff, colour runs blue (lost) to red (gained).
std::string flameGraph(const std::vector<FlameNode>& nodes, bool diff, const std::string& title);

std::string scalingChart(const ScalingChart& chart);

} // namespace lockscope::reports::svg
