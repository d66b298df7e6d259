// SPDX-License-Identifier: GPL-2.0-or-later
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "lockscope/capture/capture.h"
#include "lockscope/capture/histogram.h"
#include "lockscope/capture/tail_basis.h"
#include "lockscope/reports/run_stats.h"
#include "lockscope/reports/shared_text.h"
#include "lockscope/reports/significance.h"

// The A/B comparison engine: a set of baseline captures (repeated runs,
// usually of one kernel build) against a set of patched captures. One
// capture per side is the n = 1 case of the same model. Shared by the CLI
// renderers and the GUI, so the result is plain values that own their data
// (no pointers into the captures): it stays valid after the captures are gone.
//
// Two kinds of evidence: run statistics (each capture is one sample of a
// figure; Welch's t across runs, LKP's range separation, an effect floor),
// which give the verdicts whenever both sides have >= 2 runs; and event
// tests on the pooled histograms (significance.h), which treat each event as
// a sample and so overstate significance — supporting evidence, and the
// verdict's basis only when a side has a single run (said plainly).
//
// Locks are matched by Lock::key only, never by address (addresses differ
// between builds); stack frames are matched by (function, module) without
// offsets, as CallTree does.
namespace lockscope::reports {

// One figure on both sides. pct is (after - before) / before * 100, absent
// when before is 0 (a change from nothing has no percentage).
struct Delta {
    double before = 0.0;
    double after = 0.0;
    double delta() const noexcept { return after - before; }
    std::optional<double> pct() const noexcept;
    bool operator==(const Delta&) const = default;
};

enum class Verdict {
    Improved,             // significant and better (less wait, more throughput)
    Regressed,            // significant and worse
    NoSignificantChange,  // the difference is within noise or below the effect floor
    InsufficientData,     // too few events on a side to say anything
    OnlyBefore,           // the lock (or figure) exists in the baseline only
    OnlyAfter,            // ... in the patched capture only
    Withheld,             // a test ran but the sides are not comparable (Judgement::reason says why)
    NoVerdict,            // not judged: one run on a side, or no better/worse direction (reason says which)
};
const char* toString(Verdict v) noexcept;

// The test a verdict came from.
enum class TestKind {
    None,              // no test ran (presence, too few events, one run without an event test)
    WelchRuns,         // Welch's t across runs + range separation + effect floor
    EventHistograms,   // chi-square shape + Poisson rate on pooled events (one run per side: shown, no verdict)
    EventProportion,   // two-proportion z-test on pooled samples (CPU shares, one run per side: no verdict)
    EventShape,        // chi-square shape on pooled calls (syscall latency, one run per side: no verdict)
    QuasiPoissonRuns,  // event counts over runs, quasi-Poisson rate test + range separation + effect floor
    OneRunAgainstRuns, // one run against three or more: t on the other side's spread (prediction interval) + floors
};
const char* toString(TestKind t) noexcept;

// A verdict with the test that produced it and that test's p-value, so a
// renderer can never show a verdict beside another test's p-value.
struct Judgement {
    Verdict verdict = Verdict::NoSignificantChange;
    TestKind test = TestKind::None;
    std::optional<double> p_value;  // of `test`; absent when no test ran
    InternedString basis; // the figure judged, e.g. "wait/s" or "hold/s"
    SharedText reason; // why withheld / insufficient, or the single-run caveat; "" otherwise
    bool below_effect_floor = false;// the test passed alpha but the change is under the effect floor
    bool below_floor = false;       // the change is under the figure's absolute floor (CompareOptions::floor_*)
    // A large change (>= kLargeChangePct) left undecided: the runs per side at which the test
    // used would decide it at the observed variance (80% power); 0 when none is estimated.
    size_t runs_to_decide = 0;
    bool decided() const noexcept { return verdict == Verdict::Improved || verdict == Verdict::Regressed; }
    bool operator==(const Judgement&) const = default;
};

enum class Presence { Both, OnlyBefore, OnlyAfter };

// A stack whose wait (or hold) time changed; frames outermost first (the
// folded-stack order), labels as frameLabel() prints them.
struct PathDelta {
    // Interned: as strings, the 700k frames of the bench's 100k-stack pair's
    // paths held 49 MB.
    std::vector<InternedString> frames;
    Delta wait_ns;
    Delta hold_ns;
    Delta count;
    bool operator==(const PathDelta&) const = default;
};

// What a figure measures, which picks its test and its absolute floor.
enum class FigureKind {
    Other,            // workload results, percentages: no absolute floor
    TimePerSecond,    // ns of wait or hold per second of capture (floor: share of one CPU)
    EventsPerSecond,  // waits or holds per second (floor: events/s)
    TimePerEvent,     // mean or p99 of one wait, hold or call (floor: ns)
    TimePerOp,        // ns of wait or hold per workload operation (floor: ns)
    EventsPerOp,      // waits or holds per operation, or per 1k operations (floor: per operation)
};
const char* toString(FigureKind k) noexcept;

// One side's per-run data behind a figure: its values, and for figures made
// of counted events (waits, holds) the count and the exposure (seconds or
// operations) of each run, for the rate test.
struct RunValues {
    std::vector<double> values;
    std::vector<double> events, exposure;  // empty when the figure is not built from counted events
    bool operator==(const RunValues&) const = default;
};

// A named figure measured once per run on both sides: workload results, CPU
// share, a lock's wait/s. value holds the two sides' means (for n = 1 the
// values themselves); the change is in % except for figures that are already
// percentages (unit "%"), whose change is in percentage points.
struct MetricDelta {
    // Interned: a comparison of 10k locks holds 80k figures, with a dozen names.
    InternedString name; // "ops_per_sec", "cpu_lock_share", "wait/s", ...
    std::string unit;             // "ns", "ns/s", "/s", "%", "" ...
    Delta value;
    RunSummary before_runs, after_runs;
    std::optional<RunTest> runs_test;  // when the runs can decide (runsCanDecide): Welch's t or singleRunTest
    FigureKind kind = FigureKind::Other;
    bool higher_is_better = false;
    bool directed = true; // false: a change gets no better/worse verdict
    Judgement judgement;
    // Percentiles of lock waits: the least supported run's basis (timing
    // budget, lockscope/capture/tail_basis.h); absent for other figures.
    std::optional<TailBasis> tail_basis;
    bool isPercent() const noexcept { return unit == "%"; }
    bool operator==(const MetricDelta&) const = default;
};

// A figure with the per-run values it was summarised from: what judgeFigure
// reads. A comparison keeps the summaries only: its locks' figures are most
// of it (80k in the bench's pair), and the values, three vectors a side,
// were a third of each figure's memory.
struct FigureRuns {
    MetricDelta figure;
    RunValues before, after;
};

struct LockDelta {
    std::string key;
    // Its keys in runs where another of its callers was the hottest (the
    // comparison reads them as this key, and its notes say so); sorted.
    std::vector<std::string> also_keyed;
    std::string type;             // after's type, else before's
    Presence presence = Presence::Both;
    Delta contentions;            // wait-histogram counts
    Delta total_wait_ns;
    Delta avg_wait_ns;
    Delta p50_wait_ns;
    Delta p99_wait_ns;
    Delta max_wait_ns;
    Delta hold_count;
    Delta total_hold_ns;
    Delta avg_hold_ns;
    Delta p99_hold_ns;
    // Slow spin acquisitions (record --hold; Lock::acquire): data shown beside
    // waits and holds, not judged.
    Delta acquire_count;
    Delta total_acquire_ns;
    Delta p99_acquire_ns;
    bool has_wait = false;        // wait data on at least one side
    bool has_hold = false;        // hold data on at least one side
    bool has_acquire = false;     // acquire data on at least one side
    Significance wait_test;       // event tests on the pooled histograms (supporting evidence)
    Significance hold_test;
    // The strongest well-supported change among the lock's lead figures (total
    // wait/s and total hold/s, or wait time/op and hold time/op when
    // Comparison::per_op_leads): the decided one with the smallest p; with
    // none decided, the one with more time. basis names it; with one run on a
    // side, wait/s (hold/s without waits) with its event test and no verdict.
    Judgement judgement;
    // Per-run figures, each with its own judgement: wait/s, contentions/s,
    // mean and p99 wait when has_wait; hold/s, holds/s, mean and p99 hold when
    // has_hold; with Comparison::per_op also wait time/op, waits/1k ops, hold
    // time/op and holds/op. Rates are per second of capture (per run when a
    // capture has no duration).
    std::vector<MetricDelta> runs;
    bool hidden = false;          // |Δ%| of the judged figure below CompareOptions::threshold_pct
    Log2Hist wait_before, wait_after, hold_before, hold_after;  // for overlays
    Log2Hist acquire_before, acquire_after;
    std::vector<PathDelta> paths; // most changed call paths, by |Δ wait| descending
    bool operator==(const LockDelta&) const = default;
};

struct LatencyDelta {
    std::string name;             // syscall or function name
    Presence presence = Presence::Both;
    Delta calls;                  // every call (exact, or estimated when sampled without a count)
    Delta avg_ns;
    Delta p99_ns;
    Delta errors;
    Significance test;            // chi-square shape on the pooled calls (supporting evidence)
    MetricDelta avg_runs;         // mean latency per run; its judgement is the row's verdict
    Log2Hist before, after;       // timed calls only, pooled
    uint32_t sample_before = 1;   // 1 in N calls timed on each side
    uint32_t sample_after = 1;
    bool operator==(const LatencyDelta&) const = default;

    // " (1 in 16 timed)" or " (1 in 16 -> 1 in 4 timed)"; "" when every call was timed.
    std::string sampledNote() const;
};

// The differential call tree (top-down, flame-graph order) of all locks'
// wait and hold time: every node carries its totals on both sides. Node 0
// is the root. Frames are matched by (function, module) without offsets.
// 56 bytes: the bench's 100k-stack pair's tree has 666k nodes and only a
// few thousand distinct frames, so a node holds its frame's id.
struct DiffNode {
    uint32_t frame = 0; // DiffTree::frames; 0 is the root's
    uint32_t parent = 0;
    uint64_t before_wait_ns = 0, after_wait_ns = 0;  // totals through the node
    uint64_t before_hold_ns = 0, after_hold_ns = 0;
    uint64_t before_count = 0, after_count = 0;
    bool operator==(const DiffNode&) const = default;
};

// A node's frame: offsets stripped, as CallTree names nodes.
struct DiffFrame {
    InternedString function;
    InternedString module;
    bool operator==(const DiffFrame&) const = default;
};

// Children are kept in one array for all nodes (a vector per node was a
// third of the tree: 666k nodes, 32 MB, in the bench's 100k-stack pair).
struct DiffTree {
    std::vector<DiffNode> nodes;  // nodes[0] is the root
    std::vector<DiffFrame> frames { DiffFrame {} }; // frames[0] is the root's ("", "")
    InternedString function(uint32_t id) const { return frames[nodes[id].frame].function; }
    InternedString module(uint32_t id) const { return frames[nodes[id].frame].module; }
    // Node i's children, in the order they were added (ascending ids):
    // child_ids[child_begin[i] .. child_begin[i + 1]). Set by linkChildren.
    std::vector<uint32_t> child_begin, child_ids;
    std::span<const uint32_t> children(uint32_t id) const
    {
        return {child_ids.data() + child_begin[id], child_begin[id + 1] - child_begin[id]};
    }
    // Lays out the children from the nodes' parents, once the nodes are in.
    void linkChildren();
    bool operator==(const DiffTree&) const = default;
};

// One side's first capture (meta, workload, probes) with stats summed over its runs.
struct Side {
    Meta meta;
    Stats stats;
    Workload workload;
    std::vector<ProbeStatus> probes;
    bool operator==(const Side&) const = default;
};

// Shares of a side's data that were lost or are estimates, summed over its runs.
struct DataQuality {
    uint64_t events = 0, lost = 0, stack_failures = 0, waits = 0, waits_untimed = 0;
    uint64_t lock_events = 0;                  // waits and holds of the locks: the events that walk a stack
    double lostPct() const noexcept;           // lost / (events + lost)
    double stackFailurePct() const noexcept;   // stack failures / lock events (CPU samples and syscalls walk none)
    double untimedPct() const noexcept;        // untimed waits / waits
    bool operator==(const DataQuality&) const = default;
};

enum class CompareSort { Wait, Hold, Change };

struct CompareOptions {
    double alpha = 0.01;          // significance level of every test
    // Smaller changes are never "significant": 5% like LKP's 1.05 ratio;
    // for figures that are percentages, min_effect_pp percentage points.
    double min_effect_pct = 5.0;
    double min_effect_pp = 1.0;
    // Verdicts are withheld when the two sides' shares of lost events,
    // failed stacks or untimed waits differ by more than this many points.
    double max_loss_gap_pp = 5.0;
    double threshold_pct = 0.0;   // hide rows whose |Δ%| of the judged figure is below this (--threshold)
    CompareSort sort = CompareSort::Wait; // locks by max total wait (then hold), by max total hold, or by |Δ%|
    uint64_t min_events = 10;     // fewer events on both sides → InsufficientData
    // Absolute floors: a change smaller than these is never a verdict, however
    // small its p (LKP keeps such per-metric floors). Time per second as a share
    // of one CPU (0.1% = 1 ms/s), events per second, time per operation or
    // per event, events per operation.
    double floor_cpu_pct = 0.1;
    double floor_events_per_s = 10.0;
    double floor_ns = 10.0;
    double floor_events_per_op = 0.001;
    size_t paths_per_lock = 5;    // PathDelta rows kept per lock
    size_t top_paths = 20;        // Comparison::paths rows kept
    bool operator==(const CompareOptions&) const = default;
};

struct Comparison {
    Side before, after;
    size_t runs_before = 1, runs_after = 1;
    DataQuality quality_before, quality_after;
    std::vector<std::string> warnings;   // lost events, version/kernel mismatches, skipped probes...
    std::vector<std::string> notes;      // what the sampling budgets estimated or shared out
    // Over all locks, per run: contentions/s, wait/s, mean and p99 wait when
    // any side has waits; holds/s, hold/s, mean hold when any has holds; CPU lock share.
    std::vector<MetricDelta> headline;
    std::vector<MetricDelta> workload;   // every numeric workload result present on both sides
    std::vector<MetricDelta> cpu_leaves; // share of CPU samples per hot leaf (e.g. _raw_spin_lock), in %
    std::vector<LockDelta> locks;        // ordered by CompareOptions::sort
    std::vector<LatencyDelta> syscalls;
    std::vector<LatencyDelta> functions;
    std::vector<PathDelta> paths;        // all locks' stacks that gained/lost the most wait
    DiffTree tree;
    CompareOptions options;
    // Per-operation lock figures exist when every run on both sides reports its
    // operation count (workload result "ops"); they lead each lock's verdict
    // when the operations per second changed by at least min_effect_pct.
    bool per_op = false;
    bool per_op_leads = false;
    Delta ops_per_s;                     // the sides' mean operations per second of capture, with per_op
    bool varianceKnown() const noexcept { return runsCanDecide(runs_before, runs_after); }
    // One run against three or more: the other side's spread stands for the single run's (singleRunTest).
    bool oneRunAgainstRuns() const noexcept { return varianceKnown() && std::min(runs_before, runs_after) == 1; }
    bool operator==(const Comparison&) const = default;
};

// Run sets against run sets; each set needs at least one capture. Throws
// std::invalid_argument when the captures cannot be compared; the message is one line.
Comparison compareSets(const std::vector<Capture>& base, const std::vector<Capture>& patched,
                       const CompareOptions& options = {});
Comparison compareSets(const std::vector<const Capture*>& base, const std::vector<const Capture*>& patched,
                       const CompareOptions& options = {});
// One capture per side: compareSets with n = 1.
Comparison compare(const Capture& before, const Capture& after, const CompareOptions& options = {});

// The sentence every format prints about run-to-run variance: what n is on
// each side and, with a single run on a side, that variance is unknown.
std::string varianceNote(const Comparison& comparison);

// The judged figure's row of a lock (its runs entry named by judgement.basis), nullptr when absent.
const MetricDelta* judgedMetric(const LockDelta& lock);
// A lock's figure by name ("total hold/s", "hold time/op", ...), nullptr when it has none.
const MetricDelta* lockFigure(const LockDelta& lock, const std::string& figure);
// The lock's other totals and rates (not means or percentiles, which describe
// rather than decide) whose own verdict is a change, in runs order.
std::vector<const MetricDelta*> otherChangedFigures(const LockDelta& lock);

// Changes at least this large (in %) that no test decided get a runs-to-decide estimate.
inline constexpr double kLargeChangePct = 20.0;

// THE decision on one figure between two run sets: is it different, which
// way, by which test. Welch's t on the per-run values, or for counted events
// (EventsPer*, and any figure that is zero in every run of one side) the
// quasi-Poisson rate test on the counts; either way a verdict also needs
// p < alpha, separated ranges (every run of one side beyond every run of the
// other), a change of at least min_effect_pct (min_effect_pp for "%") and the
// figure's absolute floor. Needs >= 2 runs per side (else NoVerdict). Used
// for every run-set row of a comparison; not the presence, data-loss and
// too-few-events rules of a lock, which compareSets applies around it.
Judgement judgeFigure(const FigureRuns& figure, const CompareOptions& options);
// The absolute floor of a figure under options, in its unit (0 for FigureKind::Other).
double figureFloor(const MetricDelta& figure, const CompareOptions& options);


// The CI gate behind --fail-if-worse PCT: the regressions that are
// significant and worse by at least pct percent (a lock's total wait, the
// overall wait, CPU share in lock functions, or a workload figure). Empty
// when the gate passes. Each entry is one human-readable line.
std::vector<std::string> regressionsBeyond(const Comparison& comparison, double pct);

} // namespace lockscope::reports
