// SPDX-License-Identifier: GPL-2.0-or-later
#include <algorithm>
#include <cmath>

#include <tuple>

#include "format_runs.h"
#include "format_util.h"
#include "lockscope/capture/virtualization.h"
#include "lockscope/reports/lock_columns.h"
#include "render_internal.h"

namespace lockscope::reports::detail {

using fmt::duration;
using fmt::padLeft;
using fmt::padRight;

namespace {
std::string join(const std::vector<std::string>& v, const char* sep)
{
    std::string s;
    for (const auto& x : v)
        s += (s.empty() ? "" : sep) + x;
    return s;
}

std::string metaLine(const Meta& m)
{
    std::string s = m.label.empty() ? std::string("(unlabelled)") : fmt::printable(m.label);
    s += ": kernel " + (m.kernel_release.empty() ? std::string("?") : m.kernel_release);
    if (m.cpu_count)
        s += ", " + std::to_string(m.cpu_count) + " CPUs";
    if (!m.cpu_model.empty())
        s += " (" + fmt::printable(m.cpu_model) + ")";
    s += ", " + fmt::number(std::round(m.duration_s * 100) / 100) + " s";
    if (!m.start_time.empty())
        s += ", " + m.start_time;
    if (auto where = describeVirtualization(m.virtualization); !where.empty())
        s += ", " + where;
    return s;
}

// "at least 1.02 us": the hold probe's acquire threshold as recorded.
std::string acquireThreshold(const Meta& m)
{
    auto it = m.filters.find("acquire_min_ns");
    if (it == m.filters.end())
        return "above the hold probe's threshold";
    try {
        return "of at least " + duration(std::stod(it->second));
    } catch (const std::exception&) {
        return "above " + fmt::printable(it->second) + " ns";
    }
}

// Locks whose spin acquisitions were timed (record --hold): beside the
// waits, which the contention tracepoint may not report for spinning locks.
std::string acquireTable(const Report& r)
{
    std::string rows;
    for (const auto& l : r.locks)
        if (!l.acquire.empty())
            rows += padLeft(std::to_string(l.acquire.count()), 10) + padLeft(duration(double(l.acquire.total())), 13) +
                    padLeft(duration(double(l.p50_acquire_ns)), 13) + padLeft(duration(double(l.p99_acquire_ns)), 13) +
                    padLeft(duration(double(l.acquire.max())), 13) + "   " + fmt::printable(l.key) + "\n";
    if (rows.empty())
        return "";
    return "\nspin acquisitions " + acquireThreshold(r.meta) + " (lock call entry to return):\n" +
           padLeft("acquires", 10) + padLeft("total", 13) + padLeft("p50", 13) + padLeft("p99", 13) +
           padLeft("max", 13) + "   key\n" + rows;
}

std::string acquireComparison(const Comparison& c)
{
    std::string rows;
    for (const auto& l : c.locks)
        if (l.has_acquire)
            rows += padLeft(fmt::number(l.acquire_count.before), 10) + padLeft(fmt::number(l.acquire_count.after), 10) +
                    padLeft(duration(l.p99_acquire_ns.before), 13) + padLeft(duration(l.p99_acquire_ns.after), 13) +
                    "   " + fmt::printable(l.key) + "\n";
    if (rows.empty())
        return "";
    return "\nspin acquisitions " + acquireThreshold(c.before.meta) +
           " (lock call entry to return; shown, not judged)\n" + padLeft("before", 10) + padLeft("after", 10) +
           padLeft("p99 before", 13) + padLeft("p99 after", 13) + "   key\n" + rows;
}

// The per-lock table: lockColumn's figures right-aligned, then the key, its
// name and the caller, which can be long, last.
std::string lockTable(const std::vector<LockRow>& locks)
{
    using C = LockColumn;
    static const std::pair<C, size_t> kColumns[] = {{C::Contended, 10}, {C::TotalWait, 13}, {C::MaxWait, 13},
                                                    {C::AvgWait, 13},   {C::P50Wait, 13},   {C::P99Wait, 13},
                                                    {C::TotalHold, 13}, {C::AvgHold, 13},   {C::Type, 13}};
    std::string out = "\n";
    for (const auto& [c, width] : kColumns)
        out += padLeft(lockColumn(c).header, width);
    out += "   key / caller\n";
    for (const auto& l : locks) {
        const LockFigures f = lockFigures(l);
        for (const auto& [c, width] : kColumns)
            out += padLeft(fmt::printable(lockColumn(c).cell(f, fmt::kPlain)), width);
        out += "   " + fmt::printable(fmt::lockLabel(l.key, l.name)) +
               (l.caller.empty() ? "" : "  (" + fmt::printable(l.caller) + ")") + "\n";
    }
    return out;
}

std::string workloadLine(const Workload& w)
{
    if (w.command.empty())
        return "";
    std::string s = "workload: " + join(w.command, " ");
    if (w.exit_status)
        s += "  (exit " + std::to_string(*w.exit_status) + ")";
    if (w.signal)
        s += "  (killed by signal " + std::to_string(*w.signal) + ")";
    return s + "\n";
}

std::string latencyTable(const std::vector<LatencyRow>& rows, const char* title)
{
    if (rows.empty())
        return "";
    std::string out = std::string("\n") + title + "\n" + padRight("  name", 24) + padLeft("calls", 10) +
                      padLeft("avg", 12) + padLeft("p50", 12) + padLeft("p99", 12) + padLeft("max", 12) +
                      padLeft("errors", 8) + "\n";
    for (const auto& r : rows)
        out += padRight("  " + r.label(), 24) + padLeft(std::to_string(r.calls), 10) +
               padLeft(duration(double(r.latency.mean())), 12) + padLeft(duration(double(r.p50_ns)), 12) +
               padLeft(duration(double(r.p99_ns)), 12) + padLeft(duration(double(r.latency.max())), 12) +
               padLeft(std::to_string(r.errors), 8) + "\n";
    return out;
}

std::string probeList(const std::vector<ProbeStatus>& probes)
{
    if (probes.empty())
        return "";
    // Targets can be long lists of tracepoints: they go last, after the
    // columns that align, with the reason in parentheses.
    size_t nameW = 0, hookW = 0;
    for (const auto& p : probes) {
        nameW = std::max(nameW, p.name.size());
        hookW = std::max(hookW, p.hook.size());
    }
    std::string out = "\nprobes\n";
    for (const auto& p : probes) {
        std::string line = std::string("  ") + (p.attached ? "[attached] " : offByChoice(p) ? "[off]      " : "[skipped]  ") +
                           padRight(p.name, nameW + 2) + padRight(p.hook, hookW + 2) + p.target;
        if (!p.reason.empty())
            line += (p.target.empty() ? "(" : "  (") + p.reason + ")";
        while (!line.empty() && line.back() == ' ')
            line.pop_back();
        out += line + "\n";
    }
    return out;
}

// A right-aligned cell that keeps a space before it when its text fills the
// width (`0.000105 ns/op`), so it never runs into the column on its left.
std::string cell(const std::string& text, size_t width)
{
    return " " + padLeft(text, width - 1);
}

// One LKP-style row: figure, before (±CV), change, after (±CV), verdict with its test.
std::string figureRow(const std::string& label, const MetricDelta& m, size_t labelW)
{
    return padRight("  " + fmt::truncate(fmt::printable(label), labelW - 3), labelW) +
           cell(fmt::figureValue(m.value.before, m.unit), 14) + cell(fmt::spread(m.before_runs), 9) +
           cell(fmt::change(m), 11) + cell(fmt::figureValue(m.value.after, m.unit), 14) +
           cell(fmt::spread(m.after_runs), 9) + "   " + fmt::verdictWithTest(m.judgement) + "\n";
}

std::string figureHeader(const char* first, size_t labelW)
{
    return padRight(std::string("  ") + first, labelW) + padLeft("before", 14) + padLeft("±CV", 10) +
           padLeft("change", 11) + padLeft("after", 14) + padLeft("±CV", 10) + "   verdict (test, p)\n";
}

std::string figureTable(const std::vector<MetricDelta>& rows, const char* title, const char* prefix = "")
{
    std::string out;
    for (const auto& m : rows)
        if (fmt::hasData(m))
            out += figureRow(prefix + fmt::figureName(m.name), m, 34);
    return out.empty() ? "" : std::string("\n") + title + "\n" + figureHeader("figure", 34) + out;
}

std::string pathLines(const std::vector<PathDelta>& paths, bool wait)
{
    std::string out;
    for (const auto& p : paths) {
        const Delta& d = wait ? p.wait_ns : p.hold_ns;
        out += padLeft(fmt::signedDuration(d.delta()), 13) + padLeft(fmt::pct(d), 9) + "  " + fmt::pathText(p.frames) +
               "\n";
    }
    return out;
}
} // namespace

std::string holdersText(const std::vector<HolderRow>& holders)
{
    if (holders.empty())
        return "";
    const bool owners = std::any_of(holders.begin(), holders.end(), [](const HolderRow& h) { return h.owner_tid; });
    std::string out = owners ? "held by (owner task when the wait began, at where it was; share of wait time charged to it):\n"
                             : "held by (share of wait time while this stack held the lock; approximate):\n";
    // An owner's stack runs from where it sleeps (often deep in a page fault)
    // out to the function that took the lock: show more of it.
    for (const auto& h : holders)
        out += padLeft(fmt::percent(h.wait_share), 9) + padLeft(std::to_string(h.count), 9) +
               padLeft(duration(double(h.wait_ns)), 12) + "  " + (h.owner.empty() ? "" : fmt::printable(h.owner) + " at ") +
               fmt::pathText(h.frames, h.owner_tid ? 12 : 8) + "\n";
    return out;
}

std::string textReport(const Report& r, const RenderExtras& x)
{
    std::string out = "lockscope report — " + metaLine(r.meta) + "\n";
    out += workloadLine(r.workload);
    for (const auto& f : r.results)
        out += "  " + padRight(fmt::printable(f.name), 30) + fmt::number(f.value) + "\n";
    if (r.cpu_lock_share)
        out += std::string(fmt::kCpuLockLabel) + ": " + fmt::percent(*r.cpu_lock_share) + " (" +
               std::to_string(r.cpu.lock_samples) + " of " + std::to_string(r.cpu.samples) + " samples)\n";
    if (r.cpu_bpf_share)
        out += std::string(fmt::kCpuBpfLabel) + ": " + fmt::percent(*r.cpu_bpf_share) + " (" +
               std::to_string(r.cpu.bpf_samples.value_or(0)) + " of " + std::to_string(r.cpu.samples) + " samples)\n";
    out += "locks: " + std::to_string(r.lock_count) + ", contentions: " + std::to_string(r.total_contentions) +
           ", total wait: " + duration(double(r.total_wait_ns));
    if (r.total_hold_ns)
        out += ", total hold: " + duration(double(r.total_hold_ns));
    out += ", events: " + std::to_string(r.stats.events) + "\n";
    for (const auto& w : r.warnings)
        out += "WARNING: " + w + "\n";
    for (const auto& n : r.notes)
        out += "note: " + n + "\n";

    if (!r.cgroups.empty()) {
        out += "\nby cgroup:\n" + padLeft("share", 9) + padLeft("contended", 11) + padLeft("total wait", 13) +
               padLeft("holds", 10) + padLeft("total hold", 13) + padLeft("locks", 7) + "   cgroup\n";
        for (const auto& c : r.cgroups)
            out += padLeft(fmt::percent(c.wait_share), 9) + padLeft(std::to_string(c.contentions), 11) +
                   padLeft(duration(double(c.wait_ns)), 13) + padLeft(std::to_string(c.holds), 10) +
                   padLeft(duration(double(c.hold_ns)), 13) + padLeft(std::to_string(c.locks), 7) + "   " +
                   fmt::printable(c.cgroup) + "\n";
    }
    out += lockTable(r.locks);
    if (r.locks.size() < r.lock_count)
        out += "  ... " + std::to_string(r.lock_count - r.locks.size()) + " more locks (use --top 0 for all)\n";
    out += acquireTable(r);
    if (std::any_of(r.locks.begin(), r.locks.end(), [](const LockRow& l) { return !l.max_wait_basis.exact || !l.p99_wait_basis.exact; }))
        out += "  ~ estimated from the waits the timing budget timed (each lock's \"tails\" line says how many)\n";

    for (const auto& l : r.locks) {
        out += "\n=== " + fmt::printable(l.key) + " (" + fmt::printable(l.type) + ")";
        if (!l.nameBesideKey().empty())
            out += ", name " + fmt::printable(l.name);
        if (!l.cgroup.empty())
            out += ", cgroup " + fmt::printable(l.cgroup);
        if (l.instances > 1)
            out += ", " + std::to_string(l.instances) + " instances";
        if (l.aborted)
            out += ", " + std::to_string(l.aborted) + " aborted waits";
        out += " ===\n";
        if (const std::string note = tailNote(l, exactWaitNs(r.meta)); !note.empty())
            out += "tails: " + note + "\n";
        out += "wait time:\n" + fmt::textHistogram(l.wait, "  ");
        if (!l.hold.empty())
            out += "hold time:\n" + fmt::textHistogram(l.hold, "  ");
        if (!l.acquire.empty())
            out += "acquire time (spin in the lock call):\n" + fmt::textHistogram(l.acquire, "  ");
        if (!l.paths.empty()) {
            const std::string walked = fmt::walkedShares(l.walked_waits, l.walked_holds);
            out += "top call paths (innermost first" + (walked.empty() ? "" : "; " + walked) + "):\n";
            for (const auto& p : l.paths)
                out += padLeft(fmt::percent(p.wait_share), 9) + padLeft(std::to_string(p.count), 9) +
                       padLeft(duration(double(p.wait_ns)), 12) + "  " + fmt::pathText(p.frames) + "\n";
        }
        out += holdersText(l.holders);
    }
    out += latencyTable(r.syscalls, "syscall latency");
    out += latencyTable(r.functions, "function latency");
    if (!r.cpu.top_leaves.empty()) {
        out += "\nhottest CPU leaves (" + std::to_string(r.cpu.samples) + " samples at " +
               std::to_string(r.cpu.frequency_hz) + " Hz)\n";
        for (const auto& l : r.cpu.top_leaves)
            out += padLeft(fmt::percent(r.cpu.samples ? double(l.samples) / double(r.cpu.samples) : 0.0), 10) +
                   "  " + l.function + (l.module.empty() ? "" : " [" + l.module + "]") + "\n";
    }
    out += probeList(r.probes);
    out += scalingTable(x.scaling, false);
    return out;
}

std::string textComparison(const Comparison& c, const RenderExtras& x)
{
    std::string out = "lockscope compare\n  before: " + metaLine(c.before.meta) + "\n  after:  " +
                      metaLine(c.after.meta) + "\n" + varianceNote(c) + "\n";
    for (const auto& w : c.warnings)
        out += "WARNING: " + w + "\n";
    for (const auto& n : c.notes)
        out += "note: " + n + "\n";

    out += figureTable(c.workload, "workload");
    out += figureTable(c.headline, "all locks (per run)");
    out += figureTable(c.cpu_leaves, "share of CPU samples by leaf function", "CPU in ");

    // One row per lock on the figure it is judged by: total wait/s, or total hold/s without waits.
    std::string lockRows;
    size_t hidden = 0;
    for (const auto& l : c.locks) {
        const MetricDelta* m = judgedMetric(l);
        if (l.hidden || !m || !fmt::hasData(*m)) {
            hidden += l.hidden;
            continue;
        }
        lockRows += figureRow(fmt::truncate(l.key, 31) + " " + m->name.str(), *m, 48);
        for (const MetricDelta* other : otherChangedFigures(l))
            lockRows += figureRow(fmt::truncate(l.key, 31) + " " + other->name.str(), *other, 48);
    }
    if (!lockRows.empty())
        out += "\nlocks (matched by key), " + fmt::lockBasisNote(c) + "\n" +
               figureHeader("key and figure", 48) + lockRows;
    if (hidden)
        out += "  (" + std::to_string(hidden) + " locks changed less than --threshold " +
               fmt::number(c.options.threshold_pct) + "% and are hidden)\n";
    out += acquireComparison(c);

    size_t shown = 0;
    for (const auto& l : c.locks) {
        if (l.hidden || shown == 5 || !judgedMetric(l) || !fmt::hasData(*judgedMetric(l)))
            continue;
        ++shown;
        out += "\n=== " + fmt::printable(l.key) + " (" + fmt::printable(l.type) + "): " +
               fmt::verdictWithTest(l.judgement) + " ===\n";
        if (!l.judgement.reason.empty())
            out += "  " + l.judgement.reason.str() + "\n";
        out += figureHeader("figure", 34);
        for (const auto& m : l.runs)
            out += figureRow(m.name, m, 34);
        if (l.presence == Presence::Both)
            for (const auto& [what, has, t] : {std::tuple{"wait", l.has_wait, &l.wait_test},
                                               std::tuple{"hold", l.has_hold, &l.hold_test}})
                if (has)
                    out += std::string("  supporting event test on ") + what + " (pooled runs): chi-square " +
                           fmt::number(std::round(t->chi_square * 100) / 100) + " on " + std::to_string(t->dof) +
                           " dof (p " + fmt::pValue(t->shape_p) + "), rate test p " + fmt::pValue(t->rate_p) + "\n";
        if (l.has_wait)
            out += "wait time:\n" + fmt::textHistogramPair(l.wait_before, l.wait_after, "  ");
        if (l.has_hold)
            out += "hold time:\n" + fmt::textHistogramPair(l.hold_before, l.hold_after, "  ");
        if (l.has_acquire)
            out += "acquire time (spin in the lock call):\n" +
                   fmt::textHistogramPair(l.acquire_before, l.acquire_after, "  ");
        if (!l.paths.empty())
            out += std::string("call paths that changed most (") + (l.has_wait ? "wait" : "hold") +
                   " per run, before → after):\n" + pathLines(l.paths, l.has_wait);
    }

    if (!c.paths.empty()) {
        const bool wait = c.tree.nodes.empty() || c.tree.nodes[0].before_wait_ns + c.tree.nodes[0].after_wait_ns > 0;
        out += std::string("\ndifferential call paths, all locks (") + (wait ? "wait" : "hold") +
               " per run gained + / lost -)\n" + pathLines(c.paths, wait);
    }

    auto latency = [&](const std::vector<LatencyDelta>& rows, const char* title) {
        if (rows.empty())
            return;
        out += std::string("\n") + title + " (mean per call)\n" + figureHeader("name", 40);
        for (const auto& l : rows)
            out += figureRow(l.name + l.sampledNote(), l.avg_runs, 40);
    };
    latency(c.syscalls, "syscall latency");
    latency(c.functions, "function latency");
    out += scalingTable(x.scaling, false);
    return out;
}

} // namespace lockscope::reports::detail
