// SPDX-License-Identifier: GPL-2.0-or-later
#include <cmath>
#include <cstdio>

#include "format_util.h"
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
    return "`" + s + "`";
}

std::string cmdline(const std::vector<std::string>& v)
{
    std::string s;
    for (const auto& x : v)
        s += (s.empty() ? "" : " ") + x;
    return s;
}

std::string arrow(const Delta& d, bool time)
{
    auto v = [&](double x) { return time ? duration(x) : fmt::number(x); };
    return v(d.before) + " → " + v(d.after) + " (" + fmt::pct(d) + ")";
}

std::string verdictCell(Verdict v, const Significance& s)
{
    std::string t = toString(v);
    if (v == Verdict::Improved || v == Verdict::Regressed)
        t = "**" + t + "** (p" + (s.p_value < 0.001 ? "" : " ") + fmt::pValue(s.p_value) + ")";
    return t;
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
    if (!r.warnings.empty())
        out += "\n";
    out += "| figure | value |\n|---|---:|\n";
    for (const auto& f : r.results)
        out += "| " + mdEscape(f.name) + " | " + fmt::number(f.value) + " |\n";
    if (r.cpu_lock_share)
        out += "| CPU in lock functions | " + fmt::percent(*r.cpu_lock_share) + " |\n";
    out += "| contentions | " + std::to_string(r.total_contentions) + " |\n";
    out += "| total wait | " + duration(double(r.total_wait_ns)) + " |\n";
    if (r.total_hold_ns)
        out += "| total hold | " + duration(double(r.total_hold_ns)) + " |\n";

    out += "\n| lock | type | contended | total wait | max wait | avg wait | p99 wait | avg hold | caller |\n"
           "|---|---|---:|---:|---:|---:|---:|---:|---|\n";
    for (const auto& l : r.locks)
        out += "| " + code(l.key) + " | " + l.type + " | " + std::to_string(l.wait.count()) + " | " +
               duration(double(l.wait.total())) + " | " + duration(double(l.wait.max())) + " | " +
               duration(double(l.wait.mean())) + " | " + duration(double(l.p99_wait_ns)) + " | " +
               (l.hold.empty() ? "-" : duration(double(l.hold.mean()))) + " | " +
               (l.caller.empty() ? "" : code(l.caller)) + " |\n";
    for (const auto& l : r.locks) {
        if (l.paths.empty())
            continue;
        out += "\n<details><summary>" + fmt::htmlEscape(l.key) + ": wait histogram and top call paths</summary>\n\n"
               "```\n" + fmt::textHistogram(l.wait, "") + "\n";
        for (const auto& p : l.paths)
            out += fmt::percent(p.wait_share) + "  " + fmt::pathText(p.frames) + "\n";
        if (!l.holders.empty()) {
            out += "\nheld by (share of wait time; approximate):\n";
            for (const auto& h : l.holders)
                out += fmt::percent(h.wait_share) + "  " + (h.owner.empty() ? "" : h.owner + " at ") +
                       fmt::pathText(h.frames) + "\n";
        }
        out += "```\n</details>\n";
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

std::string markdownComparison(const Comparison& c, const RenderExtras& x)
{
    const std::string b = label(c.before.meta, "baseline"), a = label(c.after.meta, "patched");
    std::string out = "### Numbers: " + mdEscape(b) + " vs " + mdEscape(a) + "\n\n";
    out += "Baseline " + code(c.before.meta.kernel_release) + ", patched " + code(c.after.meta.kernel_release) +
           "; " + std::to_string(c.after.meta.cpu_count) + " CPUs" +
           (c.after.meta.cpu_model.empty() ? "" : " (" + mdEscape(c.after.meta.cpu_model) + ")") + ".";
    if (!c.after.workload.command.empty())
        out += " Workload: " + code(cmdline(c.after.workload.command)) + ".";
    out += "\n\n";
    for (const auto& w : c.warnings)
        out += "> **Warning:** " + mdEscape(w) + "\n";
    if (!c.warnings.empty())
        out += "\n";

    out += "| | " + mdEscape(b) + " | " + mdEscape(a) + " | change |\n|---|---:|---:|---:|\n";
    for (const auto& m : c.workload)
        out += "| " + mdEscape(m.name) + " | " + fmt::number(m.value.before) + " | " + fmt::number(m.value.after) +
               " | " + fmt::pct(m.value) + " |\n";
    for (const auto& m : c.headline) {
        std::string name = m.name == "cpu_lock_share" ? "CPU in lock functions" : m.name;
        std::string change = fmt::pct(m.value);
        if (m.unit == "%") {
            char pp[32];
            std::snprintf(pp, sizeof pp, "%+.2f pp", m.value.delta());
            change = pp;
        }
        out += "| " + mdEscape(name) + " | " + fmt::metricValue(m.value.before, m.unit) + " | " +
               fmt::metricValue(m.value.after, m.unit) + " | " + change + " |\n";
    }
    for (const auto& m : c.cpu_leaves) {
        char pp[32];
        std::snprintf(pp, sizeof pp, "%+.2f pp", m.value.delta());
        out += "| CPU in " + code(m.name) + " | " + fmt::metricValue(m.value.before, "%") + " | " +
               fmt::metricValue(m.value.after, "%") + " | " + pp + " |\n";
    }

    out += "\nTop locks by total wait (matched by key across the two kernels):\n\n"
           "| lock | type | contended | total wait | avg wait | p99 wait | verdict |\n"
           "|---|---|---:|---:|---:|---:|---|\n";
    size_t shown = 0, hidden = 0;
    for (const auto& l : c.locks) {
        if (l.hidden) {
            ++hidden;
            continue;
        }
        if (shown++ == 15)
            break;
        out += "| " + code(l.key) + " | " + l.type + " | " + arrow(l.contentions, false) + " | " +
               arrow(l.total_wait_ns, true) + " | " + arrow(l.avg_wait_ns, true) + " | " +
               arrow(l.p99_wait_ns, true) + " | " + verdictCell(l.verdict, l.wait_test) + " |\n";
    }
    if (hidden)
        out += "\n" + std::to_string(hidden) + " locks changed by less than " + fmt::number(c.options.threshold_pct) +
               "% and are not listed.\n";
    if (!c.paths.empty()) {
        out += "\nCall paths that gained or lost the most wait time:\n\n```\n";
        size_t n = 0;
        for (const auto& p : c.paths) {
            if (n++ == 8)
                break;
            out += fmt::padLeft(fmt::signedDuration(p.wait_ns.delta()), 12) + "  " + fmt::pathText(p.frames, 6) + "\n";
        }
        out += "```\n";
    }
    if (!c.syscalls.empty()) {
        out += "\n| syscall | calls | avg latency | p99 latency | verdict |\n|---|---:|---:|---:|---|\n";
        for (const auto& s : c.syscalls)
            out += "| " + code(s.name) + s.sampledNote() + " | " + arrow(s.calls, false) + " | " +
                   arrow(s.avg_ns, true) + " | " +
                   arrow(s.p99_ns, true) + " | " + verdictCell(s.verdict, s.test) + " |\n";
    }
    out += "\nSignificance: chi-square test of homogeneity on the log2 wait histograms plus a Poisson "
           "rate test on the counts (Bonferroni-combined, alpha " + fmt::number(c.options.alpha) +
           ", changes under " + fmt::number(c.options.min_effect_pct) + "% are never significant).\n";
    out += scalingTable(x.scaling, true);
    return out;
}

} // namespace lockscope::reports::detail
