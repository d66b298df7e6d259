// SPDX-License-Identifier: GPL-2.0-or-later
#pragma once

#include <QString>

#include "lockscope/reports/compare.h"
#include "lockscope/reports/report.h"

namespace lockscope::gui {

// Rich-text pages for QTextBrowser. The figures come from the reports
// library (the same numbers `lockscope report/compare` print); these
// functions only lay them out.
QString summaryHtml(const reports::Report& report);
QString compareSummaryHtml(const reports::Comparison& comparison);
// One line for the compare page's banner: the headline metrics.
QString headlineText(const reports::Comparison& comparison);
// Colour of a verdict for tables and text (green better, red worse, grey otherwise).
QString verdictColor(reports::Verdict verdict);

} // namespace lockscope::gui
