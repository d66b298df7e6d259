// SPDX-License-Identifier: GPL-2.0-or-later
#include <algorithm>
#include <cmath>
#include <cstdio>

#include "format_runs.h"
#include "lockscope/reports/change_order.h"
#include "format_util.h"
#include "compare_internal.h"
#include "lockscope/reports/lock_columns.h"
#include "render_internal.h"

// Markdown reads like the numbers section of a kernel patch description:
// baseline vs patched throughput, CPU share in lock functions, top locks.
namespace lockscope::reports::detail {

using fmt::duration;
using fmt::mdEscape;

namespace {
std::string label(const Meta& m, const char* fallback)
{
    return m.label.empty() ? fallback : m.label;
}

std::string code(const std::string& s)
{
    return fmt::mdCode(s);
}

// The per-lock table on lockColumn's columns; names escaped for Markdown.
std::string lockTable(const std::vector<LockRow>& locks)
{
    using C = LockColumn;
    static const C kColumns[] = {C::Key,     C::Type,    C::Contended, C::TotalWait, C::MaxWait,
                                 C::AvgWait, C::P99Wait, C::AvgHold,   C::Caller};
    std::string head = "\n|", rule = "\n|", rows;
    for (const C c : kColumns) {
        head += std::string(" ") + lockColumn(c).header + " |";
        rule += lockColumn(c).unit == ColumnUnit::Text ? "---|" : "---:|";
    }
    for (const auto& l : locks) {
        const LockFigures f = lockFigures(l);
        rows += "|";
        for (const C c : kColumns) {
            const std::string cell = lockColumn(c).cell(f, fmt::kPlain);
            rows += " " +
                    (c == C::Key      ? code(l.key) + (l.nameBesideKey().empty() ? "" : " " + code(l.name))
                     : c == C::Type   ? mdEscape(cell)
                     : c == C::Caller ? (cell.empty() ? "" : code(cell))
                                      : cell) +
                    " |";
        }
        rows += "\n";
    }
    return head + rule + "\n" + rows;
}

std::string cmdline(const std::vector<std::string>& v)
{
    std::string s;
    for (const auto& x : v)
        s += (s.empty() ? "" : " ") + x;
    return s;
}

// The verdict in bold when it is a change, always with its own test and p-value.
std::string verdictCell(const Judgement& j)
{
    std::string t = toString(j.verdict);
    if (j.verdict == Verdict::Improved || j.verdict == Verdict::Regressed)
        t = "**" + t + "**";
    const std::string tp = fmt::testAndP(j);
    return tp.empty() ? t : t + " (" + tp + ")";
}
} // namespace

std::string markdownReport(const Report& r, const RenderExtras& x)
{
    std::string out = "### lockscope report: " + mdEscape(label(r.meta, "capture")) + "\n\n";
    out += "Kernel " + code(r.meta.kernel_release) + ", " + std::to_string(r.meta.cpu_count) + " CPUs" +
           (r.meta.cpu_model.empty() ? "" : " (" + mdEscape(r.meta.cpu_model) + ")") + ", " +
           fmt::number(std::round(r.meta.duration_s * 100) / 100) + " s.";
    if (!r.workload.command.empty())
        out += " Workload: " + code(cmdline(r.workload.command)) + ".";
    out += "\n\n";
    for (const auto& w : r.warnings)
        out += "> **Warning:** " + mdEscape(w) + "\n";
    for (const auto& n : r.notes)
        out += "> Note: " + mdEscape(n) + "\n";
    if (!r.warnings.empty() || !r.notes.empty())
        out += "\n";
    out += "| figure | value |\n|---|---:|\n";
    for (const auto& f : r.results)
        out += "| " + mdEscape(f.name) + " | " + fmt::number(f.value) + " |\n";
    if (r.cpu_lock_share)
        out += "| " + mdEscape(fmt::kCpuLockLabel) + " | " + fmt::percent(*r.cpu_lock_share) + " |\n";
    if (r.cpu_bpf_share)
        out += "| " + mdEscape(fmt::kCpuBpfLabel) + " | " + fmt::percent(*r.cpu_bpf_share) + " |\n";
    out += "| contentions | " + std::to_string(r.total_contentions) + " |\n";
    out += "| total wait | " + duration(double(r.total_wait_ns)) + " |\n";
    if (r.total_hold_ns)
        out += "| total hold | " + duration(double(r.total_hold_ns)) + " |\n";

    if (!r.cgroups.empty()) {
        out += "\n| cgroup | locks | contended | total wait | share | holds | total hold |\n"
               "|---|---:|---:|---:|---:|---:|---:|\n";
        for (const auto& c : r.cgroups)
            out += "| " + code(c.cgroup) + " | " + std::to_string(c.locks) + " | " + std::to_string(c.contentions) +
                   " | " + duration(double(c.wait_ns)) + " | " + fmt::percent(c.wait_share) + " | " +
                   std::to_string(c.holds) + " | " + duration(double(c.hold_ns)) + " |\n";
    }
    out += lockTable(r.locks);
    for (const auto& l : r.locks) {
        if (l.paths.empty())
            continue;
        std::string block = fmt::textHistogram(l.wait, "") + "\n";
        if (const std::string walked = fmt::walkedShares(l.walked_waits, l.walked_holds); !walked.empty())
            block += "call paths' " + walked + "\n";
        for (const auto& p : l.paths)
            block += fmt::percent(p.wait_share) + "  " + fmt::pathText(p.frames) + "\n";
        if (!l.holders.empty())
            block += "\n" + holdersText(l.holders);
        // A frame name with a run of backticks cannot close a longer fence.
        const std::string fence = fmt::mdFence(block);
        out += "\n<details><summary>" + fmt::htmlEscape(fmt::printable(l.key)) +
               (l.holders.empty() ? ": wait histogram and top call paths" : ": wait histogram, top call paths and holders") +
               "</summary>\n\n" + fence + "\n" + block + fence + "\n</details>\n";
    }
    if (!r.syscalls.empty()) {
        out += "\n| syscall | calls | avg | p99 | errors |\n|---|---:|---:|---:|---:|\n";
        for (const auto& s : r.syscalls)
            out += "| " + code(s.name) + (s.sample_period > 1 ? " (1 in " + std::to_string(s.sample_period) + " timed)" : "") +
                   " | " + std::to_string(s.calls) + " | " +
                   duration(double(s.latency.mean())) + " | " + duration(double(s.p99_ns)) + " | " +
                   std::to_string(s.errors) + " |\n";
    }
    out += scalingTable(x.scaling, true);
    return out;
}

namespace {
// "412345 ±1.2%": the side's mean with LKP's %stddev when it has runs.
std::string sideCell(const MetricDelta& m, bool after)
{
    const std::string sp = fmt::spread(after ? m.after_runs : m.before_runs);
    return fmt::figureValue(after ? m.value.after : m.value.before, m.unit) + (sp.empty() ? "" : " " + sp);
}

std::string figureCells(const MetricDelta& m)
{
    return sideCell(m, false) + " | " + sideCell(m, true) + " | " + fmt::change(m) + " | " +
           verdictCell(m.judgement) + " |\n";
}

// The GUI's compare table order (change_order.h): the most severe verdict first, then the biggest change.
std::vector<const LockDelta*> topChangedLocks(const Comparison& c, size_t keep)
{
    std::vector<const LockDelta*> out;
    for (size_t i : changedFirstOrder(c)) {
        const LockDelta& l = c.locks[i];
        if (!l.hidden && judgedMetric(l) && fmt::hasData(*judgedMetric(l)))
            out.push_back(&l);
    }
    if (out.size() > keep)
        out.resize(keep);
    return out;
}
} // namespace

std::string markdownComparison(const Comparison& c, const RenderExtras& x)
{
    const std::string b = label(c.before.meta, "baseline"), a = label(c.after.meta, "patched");
    std::string out = "### Numbers: " + mdEscape(b) + " vs " + mdEscape(a) + "\n\n";
    out += "Baseline " + code(c.before.meta.kernel_release) + ", patched " + code(c.after.meta.kernel_release) +
           "; " + std::to_string(c.after.meta.cpu_count) + " CPUs" +
           (c.after.meta.cpu_model.empty() ? "" : " (" + mdEscape(c.after.meta.cpu_model) + ")") + ".";
    if (!c.after.workload.command.empty())
        out += " Workload: " + code(cmdline(c.after.workload.command)) + ".";
    out += "\n" + mdEscape(varianceNote(c)) + "\n\n";
    if (x.verbose) {
        for (const auto& w : c.warnings)
            out += "> **Warning:** " + mdEscape(w) + "\n";
        for (const auto& n : c.notes)
            out += "> Note: " + mdEscape(n) + "\n";
        if (!c.warnings.empty() || !c.notes.empty())
            out += "\n";
    }

    const std::string nb = " (n=" + std::to_string(c.runs_before) + ")", na = " (n=" + std::to_string(c.runs_after) + ")";
    std::string rows;
    for (const auto* group : {&c.workload, &c.headline})
        for (const auto& m : *group)
            if (fmt::hasData(m))
                rows += "| " + mdEscape(fmt::figureName(m.name)) + " | " + figureCells(m);
    if (x.verbose)
        for (const auto& m : c.cpu_leaves)
            if (fmt::hasData(m))
                rows += "| CPU in " + code(m.name) + " | " + figureCells(m);
    if (!rows.empty())
        out += "| | " + mdEscape(b) + nb + " | " + mdEscape(a) + na + " | change | verdict |\n|---|---:|---:|---:|---|\n" +
               rows;

    const auto top = topChangedLocks(c, x.verbose ? 25 : 10);
    if (!top.empty()) {
        out += "\nTop changed locks (matched by key; " + fmt::lockBasisNote(c) + "):\n\n"
               "| lock | figure | " + mdEscape(b) + " | " + mdEscape(a) + " | change | verdict |\n"
               "|---|---|---:|---:|---:|---|\n";
        for (const LockDelta* l : top)
        {
            out += "| " + code(l->key) + " | " + judgedMetric(*l)->name.str() + " | "
                + figureCells(*judgedMetric(*l));
            for (const MetricDelta* other : otherChangedFigures(*l))
                out += "| " + code(l->key) + " | " + other->name.str() + " | " + figureCells(*other);
        }
    }
    if (!x.verbose) {
        if (!c.warnings.empty())
            out += "\n" + std::to_string(c.warnings.size()) + (c.warnings.size() == 1 ? " warning" : " warnings") +
                   " about the captures: `lockscope compare --verbose` lists them.\n";
        return out;
    }
    if (!c.paths.empty()) {
        std::string block;
        size_t n = 0;
        for (const auto& p : c.paths) {
            if (n++ == 8)
                break;
            block += fmt::padLeft(fmt::signedDuration(p.wait_ns.delta()), 12) + "  " + fmt::pathText(p.frames, 6) + "\n";
        }
        const std::string fence = fmt::mdFence(block);
        out += "\nCall paths that gained or lost the most wait time (per run):\n\n" + fence + "\n" + block + fence + "\n";
    }
    if (!c.syscalls.empty()) {
        out += "\n| syscall (mean latency) | " + mdEscape(b) + " | " + mdEscape(a) +
               " | change | verdict |\n|---|---:|---:|---:|---|\n";
        for (const auto& s : c.syscalls)
            out += "| " + code(s.name) + s.sampledNote() + " | " + figureCells(s.avg_runs);
    }
    out += "\nMethod: " + (c.varianceKnown()
                                ? std::string(c.oneRunAgainstRuns()
                                                  ? "Student's t of the single run against the other side's runs, "
                                                    "whose spread stands for both"
                                                  : "Welch's t-test across runs") +
                                      std::string(" (a quasi-Poisson rate test over runs for "
                                              "event counts and for figures absent from one side), LKP-style range "
                                              "separation, an effect floor and an absolute floor must all hold for a "
                                              "verdict; ")
                                : std::string("one run on a side, so no verdicts; the p-values are event tests': "
                                              "chi-square homogeneity on the log2 histograms plus a Poisson rate "
                                              "test on the counts (Bonferroni-combined); ")) +
           tailMethodNote(c) + "alpha " + fmt::number(c.options.alpha) + ", changes under " + fmt::number(c.options.min_effect_pct) +
           "% (" + fmt::number(c.options.min_effect_pp) + " points for percentages) are never significant.\n";
    out += scalingTable(x.scaling, true);
    return out;
}

} // namespace lockscope::reports::detail
