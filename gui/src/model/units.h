// SPDX-License-Identifier: GPL-2.0-or-later
#pragma once

#include <cstdint>

#include <QString>

#include "lockscope/reports/compare.h"

namespace lockscope::gui {

// A duration as the CLI and the reports write it (units::duration):
// "812 ns", "1.25 ms".
QString formatNs(uint64_t ns);
// A recording's length in seconds with two decimals: "10.00 s".
QString formatSeconds(double s);
QString formatCount(uint64_t n);
// fraction in [0, 1] -> "12.3 %"; "–" when the denominator was zero.
QString formatPercent(double fraction);
// A log2 histogram bucket's lower bound, as the HTML report labels it
// (units::bucketLabel): "512 ns", "2.05 us".
QString bucketLabel(unsigned bucket);
QString fromStd(const std::string& s);
// A comparison figure in its unit, as reports::fmt::figureValue writes it
// in the display style (narrow-space digit groups, a real minus sign).
QString formatFigure(double v, const std::string& unit);
// A p-value with `digits` significant digits; one that underflowed to 0 is
// "<1e-300", not a certainty.
QString formatP(double p, int digits = 3);
// The verdict with the test that produced it and its p-value, for tooltips and cells.
QString judgementText(const reports::Judgement& j);
// A tooltip that shows `text` as it is: Qt renders a tooltip as rich text
// whenever it looks like HTML, and lock and frame names come from captures.
QString plainToolTip(const QString& text);

} // namespace lockscope::gui
