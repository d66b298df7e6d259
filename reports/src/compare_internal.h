// SPDX-License-Identifier: GPL-2.0-or-later
#pragma once

#include <future>
#include <map>
#include <string>
#include <vector>

#include "lockscope/capture/flat_index.h"
#include "lockscope/capture/site_shares.h"
#include "lockscope/capture/tail_basis.h"

#include "lockscope/reports/compare.h"

// The pieces of compareSets: the pooled comparison (one capture per side,
// the runs of a side merged into one) and the run-statistics layer on top.
namespace lockscope::reports::detail {

// Why a figure with one run on a side has no verdict (judgeFigure, the event tests).
inline constexpr const char* kOneRun = "one run on a side: run-to-run variance unknown";

// The verdict of a lock seen on one side only (p: not Presence::Both).
inline Verdict presenceVerdict(Presence p)
{
    return p == Presence::OnlyAfter ? Verdict::OnlyAfter : Verdict::OnlyBefore;
}

// Δ% used for the effect floor; a change from zero counts as infinitely large.
inline double effectPct(const Delta& x)
{
    if (auto p = x.pct())
        return *p;
    return x.after == 0.0 ? 0.0 : 1e9;
}

// A side's locks' sites as their own figures (ownShare), by lock position:
// all a comparison reads of the sites, 64 bytes where a LockSite is 240 and
// its histograms' buckets.
using SiteLists = std::vector<std::vector<SiteShare>>;

// One side as the pooled comparison reads it: the pool (a side of one run:
// that run) and its locks' sites. A caller that owns the capture and needs
// its stacks no more sets `spent_stacks` to them: they are most of a model,
// and the comparison frees them once its call trees are made.
struct PooledSide {
    const Capture& capture;
    const SiteLists& sites;
    std::vector<Stack>* spent_stacks = nullptr;
};

// The runs of one side merged into one capture: histograms and counters
// summed, durations summed, stack ids renumbered per run (a stack equal to
// one of an earlier run shares its id), each lock's sites in run order,
// meta, probes and workload from the first run. Runs are folded in one at a
// time, so a caller reading files need not hold them all.
class PoolBuilder {
public:
    struct Pool {
        Capture capture;  // its locks have no sites: they are in `sites`
        SiteLists sites;
        // A side of one run is not pooled: the run stands for it, its sites
        // copied here as shares.
        static Pool ofOneRun(const Capture& run);
        // The same, and the run's own sites freed: the shares are all the
        // comparison reads of them (a site is 240 bytes and its histograms'
        // buckets).
        static Pool ofOneRun(Capture& run);
    };

    // As add, but moves the run's stacks out and drops its sites and CPU
    // stacks: the run keeps what per-run figures need (locks' histograms,
    // latency rows, workload, meta, stats).
    void take(Capture& run);
    void add(const Capture& run);
    Pool finish();

private:
    template <class Run>
    void fold(Run& run);
    void firstRun(const Capture& run);
    template <class S>
    uint32_t poolStack(S&& s, uint32_t id);
    uint32_t stackId(uint32_t runId) const;
    void foldLock(const Lock& l);
    void foldCpu(const CpuProfile& cpu);

    Pool pool_;
    size_t runs_ = 0;
    uint32_t offset_ = 0;   // added to the current run's stack ids
    FlatIndex ids_;         // the current run's stack id -> pool id
    // Pooled stacks by hash: the first of a hash, then each one's next of the same hash.
    static constexpr uint32_t kNoStack = UINT32_MAX;
    FlatIndex byHash_;
    std::vector<uint32_t> sameHash_;
    std::map<std::string, size_t> lockIndex_, syscallIndex_, functionIndex_;
    std::map<std::pair<std::string, std::string>, uint64_t> leaves_;
};

// The pool of a side's runs (Pool::ofOneRun for one run), and the side
// comparePooled reads from it.
PoolBuilder::Pool poolRuns(const std::vector<const Capture*>& runs);
PooledSide pooledSide(const PoolBuilder::Pool& pool, const std::vector<const Capture*>& runs);

// Throws std::invalid_argument unless each side has a run.
void requireBothSides(size_t base, size_t patched);

// compareSets with each side's runs pooled; the runs need only what
// PoolBuilder::take leaves of them.
Comparison comparePools(const PooledSide& pb, const std::vector<const Capture*>& base, const PooledSide& pa,
                        const std::vector<const Capture*>& patched, const CompareOptions& options);

// Matched locks, paths and latency rows with their event tests; no verdicts,
// headline or workload figures (those need the runs). The differential tree
// is still being made on a thread of its own; it owns all it reads.
struct PooledComparison {
    Comparison rows; // tree empty
    std::future<DiffTree> tree;
};
PooledComparison comparePooled(const PooledSide& before, const PooledSide& after, const CompareOptions& options);

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
