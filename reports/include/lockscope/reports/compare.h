// SPDX-License-Identifier: GPL-2.0-or-later
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "lockscope/capture/capture.h"
#include "lockscope/capture/histogram.h"

// The A/B comparison engine: one baseline capture against one patched capture,
// usually from two kernel builds. Shared by the CLI renderers and the GUI, so
// the result is plain values that own their data (no pointers into the
// captures): it stays valid after the captures are gone.
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
};
const char* toString(Verdict v) noexcept;

// Result of the two-sample test on a pair of log2 histograms plus event
// counts. See significance.h for the tests and why they were chosen.
struct Significance {
    double p_value = 1.0;        // combined (Bonferroni over the shape and rate tests)
    double shape_p = 1.0;        // chi-square homogeneity of the bucketed distributions
    double rate_p = 1.0;         // two-sample Poisson test on the event counts
    double chi_square = 0.0;
    unsigned dof = 0;            // degrees of freedom after pooling sparse buckets
    bool significant = false;    // p_value < alpha AND the effect is >= the effect floor
    bool operator==(const Significance&) const = default;
};

enum class Presence { Both, OnlyBefore, OnlyAfter };

// A stack whose wait (or hold) time changed; frames outermost first (the
// folded-stack order), labels as frameLabel() prints them.
struct PathDelta {
    std::vector<std::string> frames;
    Delta wait_ns;
    Delta hold_ns;
    Delta count;
    bool operator==(const PathDelta&) const = default;
};

struct LockDelta {
    std::string key;
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
    bool has_hold = false;        // hold data on at least one side
    Significance wait_test;
    Significance hold_test;
    Verdict verdict = Verdict::NoSignificantChange;  // on wait (hold when there is no wait data)
    bool hidden = false;          // |Δ% total wait| below CompareOptions::threshold_pct
    Log2Hist wait_before, wait_after, hold_before, hold_after;  // for overlays
    std::vector<PathDelta> paths; // most changed call paths, by |Δ wait| descending
    bool operator==(const LockDelta&) const = default;
};

// A named scalar figure: workload results, CPU share, totals.
struct MetricDelta {
    std::string name;             // "ops_per_sec", "cpu.lock_share", "total_wait_ns", ...
    std::string unit;             // "ns", "%", "ops/s", "" ...
    Delta value;
    bool higher_is_better = false;
    Verdict verdict = Verdict::NoSignificantChange;
    bool operator==(const MetricDelta&) const = default;
};

struct LatencyDelta {
    std::string name;             // syscall or function name
    Presence presence = Presence::Both;
    Delta calls;                  // every call (exact, or estimated when sampled without a count)
    Delta avg_ns;
    Delta p99_ns;
    Delta errors;
    Significance test;
    Verdict verdict = Verdict::NoSignificantChange;
    Log2Hist before, after;       // timed calls only
    uint32_t sample_before = 1;   // 1 in N calls timed on each side
    uint32_t sample_after = 1;
    bool operator==(const LatencyDelta&) const = default;

    // " (1 in 16 timed)" or " (1 in 16 -> 1 in 4 timed)"; "" when every call was timed.
    std::string sampledNote() const;
};

// The differential call tree (top-down, flame-graph order) of all locks'
// wait and hold time: every node carries its totals on both sides. Node 0
// is the root. Frames are matched by (function, module) without offsets.
struct DiffNode {
    std::string function;
    std::string module;
    uint32_t parent = 0;
    std::vector<uint32_t> children;
    uint64_t before_wait_ns = 0, after_wait_ns = 0;  // totals through the node
    uint64_t before_hold_ns = 0, after_hold_ns = 0;
    uint64_t before_count = 0, after_count = 0;
    bool operator==(const DiffNode&) const = default;
};

struct DiffTree {
    std::vector<DiffNode> nodes;  // nodes[0] is the root
    bool operator==(const DiffTree&) const = default;
};

struct Side {
    Meta meta;
    Stats stats;
    Workload workload;
    std::vector<ProbeStatus> probes;
    bool operator==(const Side&) const = default;
};

struct CompareOptions {
    double alpha = 0.01;          // significance level of the combined test
    double min_effect_pct = 5.0;  // smaller changes are never "significant" (noise floor)
    double threshold_pct = 0.0;   // hide rows whose |Δ% total wait| is below this (--threshold)
    uint64_t min_events = 10;     // fewer events on both sides → InsufficientData
    size_t paths_per_lock = 5;    // PathDelta rows kept per lock
    size_t top_paths = 20;        // Comparison::paths rows kept
};

struct Comparison {
    Side before, after;
    std::vector<std::string> warnings;   // lost events, version/kernel mismatches, skipped probes...
    std::vector<MetricDelta> headline;   // total contentions, total wait, avg wait, hold, CPU lock share
    std::vector<MetricDelta> workload;   // every numeric workload result present on both sides
    std::vector<MetricDelta> cpu_leaves; // share of CPU samples per hot leaf (e.g. _raw_spin_lock), in %
    std::vector<LockDelta> locks;        // by max(before, after) total wait, descending
    std::vector<LatencyDelta> syscalls;
    std::vector<LatencyDelta> functions;
    std::vector<PathDelta> paths;        // all locks' stacks that gained/lost the most wait
    DiffTree tree;
    CompareOptions options;
    bool operator==(const Comparison&) const = default;
};

// Throws std::invalid_argument when the captures cannot be compared (for
// example different capture format versions); the message is one line.
Comparison compare(const Capture& before, const Capture& after, const CompareOptions& options = {});

// The CI gate behind --fail-if-worse PCT: the regressions that are
// significant and worse by at least pct percent (a lock's total wait, the
// overall wait, CPU share in lock functions, or a workload figure). Empty
// when the gate passes. Each entry is one human-readable line.
std::vector<std::string> regressionsBeyond(const Comparison& comparison, double pct);

} // namespace lockscope::reports
