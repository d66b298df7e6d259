// SPDX-License-Identifier: GPL-2.0-or-later
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "lockscope/capture/capture.h"
#include "lockscope/capture/histogram.h"
#include "lockscope/capture/site_shares.h"
#include "lockscope/capture/tail_basis.h"

// The single-capture report model: what `lockscope report` shows, computed
// once and rendered by every format (text, Markdown, HTML, JSON), so the
// renderers only lay out numbers and never compute them.
namespace lockscope::reports {

enum class SortKey { Wait, Hold, Count, Max };
std::optional<SortKey> parseSortKey(const std::string& name);
const char* toString(SortKey key) noexcept;

struct ReportOptions {
    size_t top = 20;              // lock rows kept (0 = all)
    std::string lock_key;         // only this lock (exact key, or every lock of this name) when not empty
    SortKey sort = SortKey::Wait;
    size_t paths_per_lock = 5;    // top call paths kept per lock
    // false: the capture-wide figures only (totals, warnings, probes, latency),
    // no LockRow at all: the GUI's summary, which a 10k-lock capture's rows
    // (their paths and holders) made five times dearer to open.
    bool lock_rows = true;
};

// One call path of a lock; frames outermost first, as frameLabel() prints them.
struct PathRow {
    std::vector<std::string> frames;
    uint64_t count = 0;
    uint64_t wait_ns = 0;
    uint64_t hold_ns = 0;
    double wait_share = 0.0;      // of the lock's total wait, 0..1
};

// A stack that held the lock while others waited (record --holder-stacks),
// or a mutex/rwsem owner task at where it was (record --lock-owner),
// summed over the lock's sites; frames outermost first.
struct HolderRow {
    std::vector<std::string> frames;
    uint64_t count = 0;           // waits that found it holding
    uint64_t wait_ns = 0;         // their wait time
    double wait_share = 0.0;      // of the lock's total wait, 0..1 (the rest: holder not seen)
    std::optional<uint32_t> owner_tid; // mutex/rwsem owners (record --lock-owner): frames are where it was
    std::string owner_comm;
    std::string owner;                 // "comm/tid" label, "" for spinlock holders
};

struct LockRow {
    std::string key;
    std::string name;             // what the lock is (record --lock-names), "" if unknown
    std::string nameBesideKey() const { return Lock::nameBesideKey(key, name); } // see Lock's
    std::string cgroup;           // its waiters' cgroup v2 path (record --per-cgroup), "" if not split
    std::string type;
    std::string caller;           // first non-lock frame of the hottest path ("" if none)
    std::optional<uint64_t> address;
    uint32_t instances = 1;
    uint64_t aborted = 0;
    Log2Hist wait;
    Log2Hist hold;
    Log2Hist acquire;             // slow spin acquisitions (record --hold), see Lock::acquire
    uint64_t p50_wait_ns = 0, p99_wait_ns = 0;
    uint64_t p50_hold_ns = 0, p99_hold_ns = 0;
    uint64_t p50_acquire_ns = 0, p99_acquire_ns = 0;
    uint64_t p999_wait_ns = 0;
    // What the wait tail rests on (timing budget): exact, or estimated from a sample.
    TailBasis p99_wait_basis, p999_wait_basis, max_wait_basis;
    double wait_share = 0.0;      // of all locks' wait, 0..1
    std::vector<PathRow> paths;     // with the unwalked events shared out (site_shares.h)
    WalkedShare walked_waits, walked_holds; // how many of each kind the paths' shares come from
    std::vector<HolderRow> holders; // top holders by wait_ns; empty without holder stacks
};

struct LatencyRow {
    std::string name;
    Log2Hist latency;
    uint64_t p50_ns = 0, p99_ns = 0;
    uint64_t errors = 0;
    uint64_t calls = 0;          // estimated when sampled: latency.count() * sample_period
    uint32_t sample_period = 1;  // 1 in N calls timed
    // "semtimedop", or "semtimedop (1 in 16 timed)" when sampled.
    std::string label() const
    {
        return sample_period > 1 ? name + " (1 in " + std::to_string(sample_period) + " timed)" : name;
    }
};

// Every lock of one cgroup (record --per-cgroup), before the --top cut.
struct CgroupRow {
    std::string cgroup;
    size_t locks = 0;
    uint64_t contentions = 0;
    uint64_t wait_ns = 0;
    double wait_share = 0.0;      // of all locks' wait, 0..1
    uint64_t holds = 0;           // holds of its locks (the holding task's cgroup)
    uint64_t hold_ns = 0;
};

// A numeric workload result, flattened: {"a": {"b": 3}} → "a.b" = 3.
struct NumericField {
    std::string name;
    double value = 0.0;
};

struct Report {
    Meta meta;
    Stats stats;
    Workload workload;
    std::vector<ProbeStatus> probes;
    std::vector<std::string> warnings;   // lost/dropped events, skipped probes, empty capture
    std::vector<std::string> notes;      // what the sampling budgets estimated or shared out
    std::vector<NumericField> results;   // the workload's numeric results
    uint64_t total_contentions = 0;
    uint64_t total_wait_ns = 0;
    uint64_t total_hold_ns = 0;
    size_t lock_count = 0;               // before the --top / --lock cut
    std::optional<double> cpu_lock_share;// 0..1, absent when the CPU was not sampled
    std::optional<double> cpu_bpf_share; // 0..1 running BPF (lockscope's probes among it); absent when none seen
    CpuProfile cpu;                      // stacks cleared; leaves kept
    std::vector<LockRow> locks;
    std::vector<CgroupRow> cgroups;      // by wait, then hold, descending; empty unless the capture is per cgroup
    std::vector<LatencyRow> syscalls;
    std::vector<LatencyRow> functions;
    ReportOptions options;
};

// Throws std::invalid_argument (one line) when options.lock_key names no lock.
Report buildReport(const Capture& capture, const ReportOptions& options = {});
// The holders of one lock (its LockRow::holders, and the GUI's Holders view):
// summed over the lock's sites, one row per (owner task, path), most wait
// first; keep = 0 keeps them all.
std::vector<HolderRow> lockHolders(const Lock& lock, const StackIndex& index, size_t keep = 0);

// Every numeric leaf of a JSON value, flattened with dotted names.
std::vector<NumericField> numericFields(const nlohmann::json& value);

// "~" before a figure estimated from a sample of timed waits, else "".
std::string estimateMark(const TailBasis& b);

// One line on what a lock's estimated wait tail rests on ("" when all of it
// is exact): "p99 wait est. from 812 of 97021 timed, p99.9 ..., max exact
// (every wait >= 8.4 ms timed)".
std::string tailNote(const LockRow& l, uint64_t exact_wait_ns);

} // namespace lockscope::reports
