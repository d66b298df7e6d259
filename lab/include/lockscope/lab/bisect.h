// SPDX-License-Identifier: GPL-2.0-or-later
#pragma once

#include <ostream>
#include <string>

#include "lockscope/lab/lab.h"

// `lockscope lab bisect`: the commit between two revisions of a kernel tree
// that changed one lock, judged per lock with run-to-run statistics. Each
// step builds a midpoint with the lab's cached source builds, records N
// runs, and asks reports::judge (the rule `compare --judge` uses) whether
// they are like the good or the bad endpoint. docs/bisect.md.
namespace lockscope::lab {

struct BisectOptions {
    LabOptions lab;            // workload, record args, boot options, cache; out_dir is the bisect's DIR; runs is N
    std::string accel = "auto";// lab.boot.accel's name, kept for --resume
    std::string tree, good, bad;
    std::string lock;          // key or lock name; "" = the lock whose figure changed most
    std::string figure;        // reports::judgeFigures() name; "" = the lock's judged figure
    unsigned max_runs = 0;     // runs per commit before an undecided one is skipped; 0 = 2 * runs
};

// Reads the options a bisect in dir was started with (dir/bisect.json);
// throws LabError when dir holds no bisect.
BisectOptions loadBisectOptions(const std::string& dir);

// Runs (or, resume, continues) the bisect. Progress, one line per step, to
// progress (the lab's own detail to <DIR>/lab.log); the answer to result.
// Returns the exit code: 0 when a first bad commit is named, 1 otherwise.
// Bad input throws LabError before anything is written.
int runBisect(const BisectOptions& options, bool resume, std::ostream& progress, std::ostream& result);

} // namespace lockscope::lab
