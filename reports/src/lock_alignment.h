// SPDX-License-Identifier: GPL-2.0-or-later
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "lockscope/capture/capture.h"
#include "lockscope/reports/compare.h"

// A lock with no symbol is keyed by its hottest walked caller
// ("spinlock@__do_semtimedop"). When two callers are near-tied, or a patch
// shifts the balance between them, the same lock is keyed by the other one in
// another run or build, and a comparison that matches locks by key reads it
// as gone on one side and new on the other. LockAligner is shown the runs in
// order (the before runs, then the after runs) and gives a lock whose key no
// earlier run had the key of an earlier lock when each key's caller is a
// walked caller of the other lock (same type, same partition: per-process or
// per-cgroup suffix), that earlier lock is the only one that fits, it is not
// in this run under its own key, and no other lock of the run fits it too.
namespace lockscope::reports::detail {

enum class RunSide { Before = 0, After = 1 };

// A lock's walked callers as hashes of their names, sorted and unique: what
// is kept of every lock of every run is then a few words a caller, compared
// without strings (two names of one hash, 1 in 2^64 a pair, would only let
// one more pair of keys qualify as each other's callers).
using CallerHashes = std::vector<uint64_t>;

// Each run's locks' CallerHashes, by lock index (none for a symbol's key),
// worked out apart so that the threads reading the runs can do it while
// the runs are aligned one after another.
using RunCallers = std::vector<CallerHashes>;
RunCallers walkedCallers(const Capture& run);

class LockAligner {
public:
    struct Rename {
        size_t lock; // index into the run's locks
        std::string key;
    };

    // What align() would rename in run, leaving it as it is.
    std::vector<Rename> renames(const Capture& run) const;
    // Renames run's locks as renames() says, then learn()s it (callers: walkedCallers(run)).
    void align(Capture& run, const RunCallers& callers, RunSide side);
    // Takes in the run's locks (under their keys as they stand) for the runs after it.
    void learn(const Capture& run, const RunCallers& callers);
    // Drops what learn() kept of the runs (a key and a word a caller of each
    // lock), once every run was shown; annotate() still works.
    void forgetRuns() { known_ = {}; }
    // Tells the comparison of the runs (its runs_before and runs_after set)
    // what was renamed: a note per key given, and each row's also_keyed.
    void annotate(Comparison& c) const;

private:
    std::map<std::string, CallerHashes> known_; // each key seen: its walked callers over the runs
    // (key in the run, key given) -> renamed runs per side
    std::map<std::pair<std::string, std::string>, std::array<size_t, 2>> renamed_;
};

} // namespace lockscope::reports::detail
