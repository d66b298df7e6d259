// SPDX-License-Identifier: GPL-2.0-or-later
#pragma once

#include <cstdint>
#include <span>
#include <string>

#include "lockscope/capture/capture.h"
#include "lockscope/capture/tail_basis.h"
#include "lockscope/reports/format.h"
#include "lockscope/reports/report.h"

// The columns of every per-lock table (the text, Markdown and HTML reports,
// `lockscope record`'s and `lockscope info`'s top locks, the GUI's lock
// table): one descriptor each, with its header, unit, sort key and cell, so
// a front end only picks columns and lays them out (perf lock's idea).
namespace lockscope::reports {

// What a lock row shows, read from a report's LockRow or a capture's Lock.
struct LockFigures {
    const std::string* key = nullptr;
    const std::string* name = nullptr;
    const std::string* type = nullptr;
    const std::string* caller = nullptr; // "" for a capture's Lock
    const Log2Hist* wait = nullptr;
    const Log2Hist* hold = nullptr;
    const Log2Hist* acquire = nullptr; // slow spin acquisitions (record --hold)
    uint64_t p50_wait_ns = 0, p99_wait_ns = 0, p99_acquire_ns = 0;
    TailBasis max_wait_basis, p99_wait_basis; // "~" in the cell when estimated
};
LockFigures lockFigures(const LockRow& l);
// A capture's lock; with the capture's meta its tails say whether the timing
// budget made them estimates, without it they are taken as exact.
LockFigures lockFigures(const Lock& l, const Meta* meta = nullptr);

enum class LockColumn {
    Key,
    Type,
    Contended,
    TotalWait,
    MaxWait,
    AvgWait,
    P50Wait,
    P99Wait,
    Holds,
    TotalHold,
    AvgHold,
    MaxHold,
    Acquires,
    P99Acquire,
    Caller
};
enum class ColumnUnit { Text, Count, Ns };

struct LockColumnSpec {
    LockColumn id;
    const char* header; // "max wait"
    const char* brief;  // "max": in a table that is all about waits
    ColumnUnit unit;
    // The lock's field in the JSON report ("p99_wait_ns"): its string for a
    // text column, else value's raw number. nullptr where the JSON report
    // carries the figure only inside the lock's "wait" or "hold" histogram.
    const char* json;
    // The sort key (0 for text columns); tables sort locks by TotalWait's.
    uint64_t (*value)(const LockFigures&);
    // The cell, unescaped: counts grouped as the style says, durations in
    // their unit, "~" before an estimated tail, the style's `none` where
    // nothing was timed (a lock never held, none of its acquisitions slow)
    // rather than a zero time.
    std::string (*cell)(const LockFigures&, const fmt::Style&);
};
const LockColumnSpec& lockColumn(LockColumn c);
// Every column, in LockColumn's order.
std::span<const LockColumnSpec> lockColumns();

} // namespace lockscope::reports
