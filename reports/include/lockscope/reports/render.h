// SPDX-License-Identifier: GPL-2.0-or-later
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "lockscope/reports/compare.h"
#include "lockscope/reports/report.h"
#include "lockscope/reports/scaling.h"

// Renderers for the report and comparison models. Every format lays out
// the same model; shared pieces (units, histogram bars, tables) live in one
// place (format_util.h), so there is no per-format arithmetic.
namespace lockscope::reports {

enum class Format { Text, Markdown, Html, Json };
std::optional<Format> parseFormat(std::string_view name);
const char* toString(Format f) noexcept;

// Extra material shown beside the kernel figures.
struct RenderExtras {
    std::vector<ScalingChart> scaling;   // before/after scaling curves
    // Markdown comparisons: everything (warnings, paths, syscalls, method)
    // instead of only the headline and the top changed locks.
    bool verbose = false;
};

std::string render(const Report& report, Format format, const RenderExtras& extras = {});
std::string render(const Comparison& comparison, Format format, const RenderExtras& extras = {});

// The few lines `lockscope record` prints when it ends: the most contended
// locks by total wait, one row each, keys cut to fit a terminal.
std::string topLocksTable(const Capture& capture, size_t rows = 10);

// Empty, or the warning that the CPUs spin in spinlock code while the
// attached wait probe saw no spinning wait: this kernel hides them. Every
// report carries it; record prints it when it ends.
std::string hiddenSpinWaits(const Capture& capture);

} // namespace lockscope::reports
