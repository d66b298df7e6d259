// SPDX-License-Identifier: GPL-2.0-or-later
#include "lockscope/reports/report.h"

#include <algorithm>
#include <map>
#include <span>
#include <stdexcept>

#include "lockscope/capture/calltree.h"
#include "lockscope/capture/units.h"
#include "paths.h"
#include "warnings.h"

namespace lockscope::reports {

std::optional<SortKey> parseSortKey(const std::string& name)
{
    if (name == "wait")
        return SortKey::Wait;
    if (name == "hold")
        return SortKey::Hold;
    if (name == "count")
        return SortKey::Count;
    if (name == "max")
        return SortKey::Max;
    return std::nullopt;
}

const char* toString(SortKey key) noexcept
{
    switch (key) {
    case SortKey::Wait: return "wait";
    case SortKey::Hold: return "hold";
    case SortKey::Count: return "count";
    case SortKey::Max: return "max";
    }
    return "?";
}

namespace {
void flatten(const nlohmann::json& v, const std::string& prefix, std::vector<NumericField>& out)
{
    if (v.is_object()) {
        for (auto it = v.begin(); it != v.end(); ++it)
            flatten(it.value(), prefix.empty() ? it.key() : prefix + "." + it.key(), out);
    } else if (v.is_number() && !prefix.empty()) {
        out.push_back({prefix, v.get<double>()});
    }
}

uint64_t sortValue(const LockRow& r, SortKey key)
{
    switch (key) {
    case SortKey::Wait: return r.wait.total();
    case SortKey::Hold: return r.hold.total();
    case SortKey::Count: return r.wait.count() ? r.wait.count() : r.hold.count();
    case SortKey::Max: return std::max(r.wait.max(), r.hold.max());
    }
    return 0;
}
} // namespace

std::vector<NumericField> numericFields(const nlohmann::json& value)
{
    std::vector<NumericField> out;
    flatten(value, "", out);
    return out;
}

namespace {
std::vector<LatencyRow> latencyRows(const std::vector<LatencyEntry>& entries)
{
    std::vector<LatencyRow> rows;
    for (const auto& e : entries)
        rows.push_back({e.name, e.latency, e.latency.percentile(50), e.latency.percentile(99), e.errors, e.calls(),
                        e.sample_period});
    std::stable_sort(rows.begin(), rows.end(),
                     [](const LatencyRow& a, const LatencyRow& b) { return a.latency.total() > b.latency.total(); });
    return rows;
}

} // namespace

// The same holder path reached from several waiter sites is one row.
std::vector<HolderRow> lockHolders(const Lock& lock, const StackIndex& index, size_t keep)
{
    std::map<std::string, HolderRow> byPath;
    for (const auto& h : shareOutHolders(lock, index).holders) {
        std::vector<std::string> frames = pathLabels(index.find(h.stack_id));
        const std::string owner
            = h.owner_tid ? (h.owner_comm.empty() ? "?" : h.owner_comm) + "/" + std::to_string(*h.owner_tid) : "";
        HolderRow& row = byPath[owner + '\x1f' + joinPath(frames)];
        if (row.frames.empty()) {
            row.frames = std::move(frames);
            row.owner_tid = h.owner_tid;
            row.owner_comm = h.owner_comm;
            row.owner = owner;
        }
        row.count += h.count;
        row.wait_ns = saturatingAdd(row.wait_ns, h.wait_ns);
    }
    std::vector<HolderRow> rows;
    for (auto& [path, row] : byPath) {
        row.wait_share = lock.wait.total() ? double(row.wait_ns) / double(lock.wait.total()) : 0.0;
        rows.push_back(std::move(row));
    }
    std::stable_sort(rows.begin(), rows.end(),
                     [](const HolderRow& a, const HolderRow& b) { return a.wait_ns > b.wait_ns; });
    if (keep && rows.size() > keep)
        rows.resize(keep);
    return rows;
}

namespace {

std::vector<CgroupRow> cgroupRows(const Capture& capture, uint64_t totalWaitNs)
{
    std::map<std::string, CgroupRow> by;
    for (const auto& lock : capture.locks) {
        if (lock.cgroup.empty())
            continue;
        CgroupRow& c = by[lock.cgroup];
        c.cgroup = lock.cgroup;
        c.locks += 1;
        c.contentions += lock.wait.count();
        c.wait_ns = saturatingAdd(c.wait_ns, lock.wait.total());
        c.holds += lock.hold.count();
        c.hold_ns = saturatingAdd(c.hold_ns, lock.hold.total());
    }
    std::vector<CgroupRow> rows;
    for (auto& [path, c] : by) {
        c.wait_share = totalWaitNs ? double(c.wait_ns) / double(totalWaitNs) : 0.0;
        rows.push_back(std::move(c));
    }
    std::stable_sort(rows.begin(), rows.end(),
                     [](const CgroupRow& a, const CgroupRow& b) {
                         return a.wait_ns != b.wait_ns ? a.wait_ns > b.wait_ns : a.hold_ns > b.hold_ns;
                     });
    return rows;
}

} // namespace

Report buildReport(const Capture& capture, const ReportOptions& options)
{
    Report r;
    r.meta = capture.meta;
    r.stats = capture.stats;
    r.workload = capture.workload;
    r.probes = capture.probes;
    r.options = options;
    r.warnings = captureWarnings(capture, "");
    r.notes = captureNotes(capture, "");
    r.results = numericFields(capture.workload.results);
    if (capture.cpu.samples > 0)
        r.cpu_lock_share = capture.cpu.lockShare();
    if (capture.cpu.bpf_samples.value_or(0) > 0)
        r.cpu_bpf_share = capture.cpu.bpfShare();
    r.cpu = capture.cpu;
    r.cpu.stacks.clear();
    r.lock_count = capture.locks.size();

    const StackIndex index(capture);
    for (const auto& lock : capture.locks) {
        r.total_contentions += lock.wait.count();
        r.total_wait_ns = saturatingAdd(r.total_wait_ns, lock.wait.total());
        r.total_hold_ns = saturatingAdd(r.total_hold_ns, lock.hold.total());
    }
    bool found = options.lock_key.empty() || !options.lock_rows;
    const std::span<const Lock> rowLocks = options.lock_rows ? std::span<const Lock>(capture.locks) : std::span<const Lock>();
    for (const auto& lock : rowLocks) {
        if (!options.lock_key.empty() && lock.key != options.lock_key && lock.name != options.lock_key)
            continue;
        found = true;
        LockRow row;
        row.key = lock.key;
        row.name = lock.name;
        row.cgroup = lock.cgroup;
        row.type = lock.type;
        row.address = lock.address;
        row.instances = lock.instances;
        row.aborted = lock.aborted;
        row.wait = lock.wait;
        row.hold = lock.hold;
        row.p50_wait_ns = lock.wait.percentile(50);
        row.p99_wait_ns = lock.wait.percentile(99);
        row.p50_hold_ns = lock.hold.percentile(50);
        row.p99_hold_ns = lock.hold.percentile(99);
        row.acquire = lock.acquire;
        row.p50_acquire_ns = lock.acquire.percentile(50);
        row.p99_acquire_ns = lock.acquire.percentile(99);
        row.p999_wait_ns = lock.wait.percentile(99.9);
        const uint64_t exactNs = exactWaitNs(capture.meta);
        row.p99_wait_basis = percentileBasis(lock.wait, lock.wait_untimed, exactNs, 99);
        row.p999_wait_basis = percentileBasis(lock.wait, lock.wait_untimed, exactNs, 99.9);
        row.max_wait_basis = maxBasis(lock.wait, lock.wait_untimed, exactNs);
        row.wait_share = r.total_wait_ns ? double(lock.wait.total()) / double(r.total_wait_ns) : 0.0;
        const LockShares shares = shareOutUnsampled(lock, index);
        row.walked_waits = shares.waits;
        row.walked_holds = shares.holds;
        for (auto& p : lockPaths(shares, index)) {
            PathRow pr;
            pr.frames = std::move(p.frames);
            pr.count = p.count;
            pr.wait_ns = p.wait_ns;
            pr.hold_ns = p.hold_ns;
            pr.wait_share = lock.wait.total() ? double(p.wait_ns) / double(lock.wait.total()) : 0.0;
            row.paths.push_back(std::move(pr));
        }
        row.caller = callerOf(shares, index);
        row.holders = lockHolders(lock, index, options.paths_per_lock);
        if (options.paths_per_lock && row.paths.size() > options.paths_per_lock)
            row.paths.resize(options.paths_per_lock);
        r.locks.push_back(std::move(row));
    }
    if (!found)
        throw std::invalid_argument("no lock with key '" + options.lock_key + "' in this capture (" +
                                    std::to_string(capture.locks.size()) +
                                    " locks); run without --lock to list the keys");
    std::stable_sort(r.locks.begin(), r.locks.end(), [&](const LockRow& a, const LockRow& b) {
        const uint64_t va = sortValue(a, options.sort), vb = sortValue(b, options.sort);
        return va != vb ? va > vb : a.key < b.key;
    });
    if (options.top && r.locks.size() > options.top)
        r.locks.resize(options.top);
    r.cgroups = cgroupRows(capture, r.total_wait_ns);
    r.syscalls = latencyRows(capture.syscalls);
    r.functions = latencyRows(capture.functions);
    return r;
}

std::string estimateMark(const TailBasis& b)
{
    return b.exact ? "" : "~";
}

std::string tailNote(const LockRow& l, uint64_t exact_wait_ns)
{
    const std::pair<const char*, const TailBasis*> figures[] = {
        { "p99 wait", &l.p99_wait_basis }, { "p99.9 wait", &l.p999_wait_basis }, { "max wait", &l.max_wait_basis } };
    auto join = [](std::string& to, const std::string& what) { to += (to.empty() ? "" : ", ") + what; };
    std::string estimated, exact;
    for (const auto& [name, b] : figures) {
        if (b->exact)
            join(exact, name);
        else
            join(estimated, name + std::string(" ") + b->text());
    }
    if (estimated.empty())
        return "";
    if (!exact.empty())
        estimated += "; " + exact + " exact";
    if (exact_wait_ns)
        estimated += " (every wait >= " + units::duration(double(exact_wait_ns)) + " timed)";
    return estimated;
}

} // namespace lockscope::reports
