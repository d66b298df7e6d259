// SPDX-License-Identifier: GPL-2.0-or-later
#pragma once

#include <string>

#include "lockscope/reports/render.h"

// One function per (model, format); render.cpp dispatches.
namespace lockscope::reports::detail {

std::string textReport(const Report& r, const RenderExtras& x);
std::string textComparison(const Comparison& c, const RenderExtras& x);
std::string markdownReport(const Report& r, const RenderExtras& x);
std::string markdownComparison(const Comparison& c, const RenderExtras& x);
std::string htmlReport(const Report& r, const RenderExtras& x);
std::string htmlComparison(const Comparison& c, const RenderExtras& x);
void jsonReport(const Report& r, const RenderExtras& x, const TextSink& sink);
void jsonComparison(const Comparison& c, const RenderExtras& x, const TextSink& sink);

// A lock's "held by" section as plain lines (text and the Markdown code
// block share it): spinlock holders name a path; lock owners (record
// --lock-owner) the task "comm/tid" and, as the path, where it was.
std::string holdersText(const std::vector<HolderRow>& holders);

// Scaling charts as a plain table (text and Markdown share the rows).
std::string scalingTable(const std::vector<ScalingChart>& charts, bool markdown);

} // namespace lockscope::reports::detail
