// SPDX-License-Identifier: GPL-2.0-or-later
#pragma once

#include <string>

#include "lockscope/reports/compare.h"
#include "lockscope/reports/format.h"

// Formatting of run statistics and judgements, shared by every comparison
// renderer so that a verdict is always printed with its own test and p-value.
namespace lockscope::reports::fmt {

// "regressed (Welch t over runs, p 0.003)", "withheld (...)", "only after", ...
std::string verdictWithTest(const Judgement& j);
// The verdict word alone, and the test and p-value alone ("Welch t over runs, p 0.003"; "" when no test ran).
std::string testAndP(const Judgement& j);
// "mean ± stddev" of a side, or the mean alone with one run.
std::string meanSpread(const MetricDelta& m, bool after);
// How the lock rows are judged: with runs, the strongest of total wait/s and
// total hold/s (or time per operation when throughput changed); with one run,
// on total wait/s, or total hold/s when a lock has too few waits to judge.
std::string lockBasisNote(const Comparison& c);
// True when the row carries any data (no 0 → 0 rows in tables).
bool hasData(const MetricDelta& m);

} // namespace lockscope::reports::fmt
