// SPDX-License-Identifier: GPL-2.0-or-later
#pragma once

#include <map>
#include <string>
#include <vector>

#include "lockscope/capture/tail_basis.h"

#include "lockscope/reports/compare.h"

// The pieces of compareSets: the pooled comparison (one capture per side,
// the runs of a side merged into one) and the run-statistics layer on top.
namespace lockscope::reports::detail {

// Δ% used for the effect floor; a change from zero counts as infinitely large.
inline double effectPct(const Delta& x)
{
    if (auto p = x.pct())
        return *p;
    return x.after == 0.0 ? 0.0 : 1e9;
}

// The runs of one side merged into one capture: histograms and counters
// summed, durations summed, stack ids renumbered per run, meta, probes and
// workload from the first run.
Capture poolRuns(const std::vector<const Capture*>& runs);

// Matched locks, paths, tree and latency rows with their event tests; no
// verdicts, headline or workload figures (those need the runs).
Comparison comparePooled(const Capture& before, const Capture& after, const CompareOptions& options);

// One run's locks by key.
using RunLocks = std::map<std::string, const Lock*>;
std::vector<RunLocks> runLocks(const std::vector<const Capture*>& runs);

// The least supported basis of lock `key`'s p-th wait percentile over the
// runs of both sides (an estimate from the fewest timed waits), or exact.
// Each side's runs come with their runLocks.
TailBasis weakestTailBasis(const std::vector<const Capture*>& base, const std::vector<RunLocks>& baseLocks,
                           const std::vector<const Capture*>& patched, const std::vector<RunLocks>& patchedLocks,
                           const std::string& key, double p);

// Withholds m's verdict when its tail_basis cannot support one: an estimate
// with too few timed waits beyond it (kTimedBeyondForVerdict).
void withholdUnsupportedTail(MetricDelta& m);

// The method line's sentence on estimated tails; "" when every tail compared is exact.
std::string tailMethodNote(const Comparison& c);

// Lost/failed/untimed shares of a side, summed over its runs.
DataQuality dataQuality(const std::vector<const Capture*>& runs);

// Notes on a set comparison: what each side's budgets estimated (untimed
// waits) or shared out (unwalked stacks), normal sampling, not lost data.
std::vector<std::string> setNotes(const std::vector<const Capture*>& base, const std::vector<const Capture*>& patched,
                                  const DataQuality& before, const DataQuality& after);

// Warnings about a set comparison: probe skips grouped by cause, data quality
// per side with shares, empty captures, duration and build notes.
std::vector<std::string> setWarnings(const std::vector<const Capture*>& base,
                                     const std::vector<const Capture*>& patched, const DataQuality& before,
                                     const DataQuality& after);

} // namespace lockscope::reports::detail
