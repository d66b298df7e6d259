// SPDX-License-Identifier: GPL-2.0-or-later
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "lockscope/capture/capture.h"
#include "lockscope/reports/compare.h"

// The bisect decision rule, one function for `lab bisect` and
// `compare --judge`: is a candidate's run set like the good runs or like the
// bad ones, for one lock and one figure? It decides nothing itself about
// noise: it reads the compare engine's per-lock, per-figure verdicts
// (compareSets) of candidate against good and candidate against bad, so any
// improvement to those verdicts (floors, presence tests) changes bisect too.
namespace lockscope::reports {

// A lock figure a judge decides on: its command-line name and the row of
// LockDelta::runs that holds it. All are lower-is-better.
struct JudgeFigure {
    const char* name;  // "total_wait"
    const char* row;   // "total wait/s"
    const char* unit;  // the row's: "ns/s", "/s" or "ns"
    bool hold;         // a hold figure (else a wait figure)
};
const std::vector<JudgeFigure>& judgeFigures();
// "total_wait, total_hold, ..." for help and errors.
std::string judgeFigureNames();

// LOCK[:FIGURE]; LOCK is a lock key or a lock name (Lock::name). Without a
// figure, the one the compare judges the lock on (wait when it has waits).
struct JudgeTarget {
    std::string lock;
    std::string figure;  // a JudgeFigure name, "" = the lock's judged figure
};
// Throws std::invalid_argument (one line) for an empty lock or an unknown figure.
JudgeTarget parseJudgeTarget(const std::string& text);

// How the figure moved from a reference set to another set.
enum class Change { Same, Up, Down, Unclear };
const char* toString(Change c) noexcept;

struct FigureChange {
    Change change = Change::Unclear;
    std::string verdict;             // the compare's verdict it was read from ("no significant change", ...)
    std::optional<double> p_value;   // of the verdict's test
    std::string reason;              // why Unclear, or what presence decided
    RunSummary reference, other;     // the figure per run on each side (n = 0 when it has no value)
    std::string text() const;        // "regressed (p 0.0012)" / "only after" / "withheld: ..."
};

enum class Call { Good, Bad, Undecided };
const char* toString(Call c) noexcept;
// git bisect run's codes: 0 good, 1 bad, 125 skip (undecided).
int exitCode(Call c) noexcept;


struct JudgeResult {
    Call call = Call::Undecided;
    std::string lock;            // the key judged, as the good runs name it
    std::string lock_name;       // Lock::name when known
    std::string figure;          // JudgeFigure::name
    // Captures in which the lock had another key and was found by its name
    // ("spinlock@__do_semtimedop as spinlock@sem_lock, by name sem_lock"); empty when every key matched.
    std::vector<std::string> matched_by_name;
    std::optional<FigureChange> endpoints;  // good against bad (when bad runs are given)
    FigureChange vs_good;        // good (reference) against the candidate
    std::optional<FigureChange> vs_bad;     // bad (reference) against the candidate
    std::string why;             // one line: what decided
};

// The decision. good and candidate need at least one capture each; bad may
// be empty: then the candidate is bad when its figure rose beyond noise from
// the good runs, good when it did not change, undecided otherwise. With bad
// runs it is good when like the good runs and unlike the bad ones in the
// direction the endpoints differ, bad when the reverse, undecided otherwise
// (also when good and bad are alike). Throws std::invalid_argument when the
// lock is in none of the captures or the sets cannot be compared.
JudgeResult judge(const std::vector<Capture>& good, const std::vector<Capture>& candidate,
                  const std::vector<Capture>& bad, const JudgeTarget& target, const CompareOptions& options = {});

// How the figure changed from good to bad (the bisect's precondition: Up
// or Down). The lock is matched across the sets as judge() does.
FigureChange endpointChange(const std::vector<Capture>& good, const std::vector<Capture>& bad,
                            JudgeTarget& target, const CompareOptions& options = {});

// Without --lock: the lock whose figure changed most significantly between
// good and bad, with the sentence saying which and why; nullopt when no lock
// changed: regressions (the figure went up) before improvements, then the
// smallest p of the figure's runs test (the event test's with one run a
// side), then the largest change.
struct PickedLock {
    JudgeTarget target;  // the key and the figure
    FigureChange change;
    std::string why;
};
std::optional<PickedLock> pickChangedLock(const std::vector<Capture>& good, const std::vector<Capture>& bad,
                                          const std::string& figure, const CompareOptions& options = {});

// The figure as the candidate runs show it: "1.23 ms/s ± 4.5% (n 3)".
std::string figureText(const JudgeFigure& figure, const RunSummary& runs);
const JudgeFigure& judgeFigure(const std::string& name);  // throws std::invalid_argument

} // namespace lockscope::reports
