// SPDX-License-Identifier: GPL-2.0-or-later
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "lockscope/reports/compare.h"
#include "lockscope/reports/lock_columns.h"
#include "lockscope/reports/report.h"
#include "lockscope/reports/scaling.h"
#include "lockscope/util/text_sink.h"

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
// The same handed over in pieces as it is made: a JSON comparison of two
// big captures runs to hundreds of MB, more than the models it comes from,
// so JSON comes a piece at a time; the other formats come whole.
using util::TextSink;
void render(const Report& report, Format format, const RenderExtras& extras, const TextSink& sink);
void render(const Comparison& comparison, Format format, const RenderExtras& extras, const TextSink& sink);

// How a top-locks table is laid out: its columns (lockColumn's, key and type
// first, each figure headed by its brief name) and widths.
struct TopLocksLayout {
    std::vector<LockColumn> columns{LockColumn::Key,       LockColumn::Type,    LockColumn::Contended,
                                    LockColumn::TotalWait, LockColumn::MaxWait, LockColumn::AvgWait};
    std::string indent;       // before every line
    size_t key_width = 48;    // at most; longer keys are cut with "..." when cut_keys
    bool cut_keys = true;
    size_t type_width = 12;
    size_t figure_width = 10; // at least; wider for a longer header
    bool contended_only = true; // leave out the locks that never waited
};

// The most contended locks by total wait, one row each. The default layout
// is the few lines `lockscope record` prints when it ends, keys cut to fit a
// terminal; `lockscope info` lays out its own columns.
std::string topLocksTable(const Capture& capture, size_t rows = 10, const TopLocksLayout& layout = {});

// Empty, or the warning that the CPUs spin in spinlock code while the
// attached wait probe saw no spinning wait: this kernel hides them. Every
// report carries it; record prints it when it ends.
std::string hiddenSpinWaits(const Capture& capture);

} // namespace lockscope::reports
