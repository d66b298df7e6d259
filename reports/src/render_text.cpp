// SPDX-License-Identifier: GPL-2.0-or-later
#include <algorithm>
#include <cmath>

#include "format_util.h"
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
    std::string s = m.label.empty() ? std::string("(unlabelled)") : m.label;
    s += ": kernel " + (m.kernel_release.empty() ? std::string("?") : m.kernel_release);
    if (m.cpu_count)
        s += ", " + std::to_string(m.cpu_count) + " CPUs";
    if (!m.cpu_model.empty())
        s += " (" + m.cpu_model + ")";
    s += ", " + fmt::number(std::round(m.duration_s * 100) / 100) + " s";
    if (!m.start_time.empty())
        s += ", " + m.start_time;
    return s;
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
        std::string line = std::string("  ") + (p.attached ? "[attached] " : "[skipped]  ") +
                           padRight(p.name, nameW + 2) + padRight(p.hook, hookW + 2) + p.target;
        if (!p.reason.empty())
            line += (p.target.empty() ? "(" : "  (") + p.reason + ")";
        while (!line.empty() && line.back() == ' ')
            line.pop_back();
        out += line + "\n";
    }
    return out;
}

std::string deltaCells(const Delta& d, bool time, size_t w)
{
    auto v = [&](double x) { return time ? duration(x) : fmt::number(x); };
    return padLeft(v(d.before), w) + padLeft(v(d.after), w) + padLeft(fmt::pct(d), 9);
}

std::string sigText(const Significance& s, Verdict v)
{
    std::string t = toString(v);
    if (v == Verdict::Improved || v == Verdict::Regressed || v == Verdict::NoSignificantChange)
        t += " (p " + fmt::pValue(s.p_value) + ")";
    return t;
}
} // namespace

std::string textReport(const Report& r, const RenderExtras& x)
{
    std::string out = "lockscope report — " + metaLine(r.meta) + "\n";
    out += workloadLine(r.workload);
    for (const auto& f : r.results)
        out += "  " + padRight(f.name, 30) + fmt::number(f.value) + "\n";
    if (r.cpu_lock_share)
        out += "CPU in lock functions: " + fmt::percent(*r.cpu_lock_share) + " (" +
               std::to_string(r.cpu.lock_samples) + " of " + std::to_string(r.cpu.samples) + " samples)\n";
    out += "locks: " + std::to_string(r.lock_count) + ", contentions: " + std::to_string(r.total_contentions) +
           ", total wait: " + duration(double(r.total_wait_ns));
    if (r.total_hold_ns)
        out += ", total hold: " + duration(double(r.total_hold_ns));
    out += ", events: " + std::to_string(r.stats.events) + "\n";
    for (const auto& w : r.warnings)
        out += "WARNING: " + w + "\n";

    out += "\n" + padLeft("contended", 10) + padLeft("total wait", 13) + padLeft("max wait", 13) +
           padLeft("avg wait", 13) + padLeft("p50 wait", 13) + padLeft("p99 wait", 13) + padLeft("total hold", 13) +
           padLeft("avg hold", 13) + padLeft("type", 13) + "   key / caller\n";
    for (const auto& l : r.locks) {
        const bool hold = !l.hold.empty();
        out += padLeft(std::to_string(l.wait.count()), 10) + padLeft(duration(double(l.wait.total())), 13) +
               padLeft(duration(double(l.wait.max())), 13) + padLeft(duration(double(l.wait.mean())), 13) +
               padLeft(duration(double(l.p50_wait_ns)), 13) + padLeft(duration(double(l.p99_wait_ns)), 13) +
               padLeft(hold ? duration(double(l.hold.total())) : "-", 13) +
               padLeft(hold ? duration(double(l.hold.mean())) : "-", 13) + padLeft(l.type, 13) + "   " + l.key +
               (l.caller.empty() ? "" : "  (" + l.caller + ")") + "\n";
    }
    if (r.locks.size() < r.lock_count)
        out += "  ... " + std::to_string(r.lock_count - r.locks.size()) + " more locks (use --top 0 for all)\n";

    for (const auto& l : r.locks) {
        out += "\n=== " + l.key + " (" + l.type + ")";
        if (l.instances > 1)
            out += ", " + std::to_string(l.instances) + " instances";
        if (l.aborted)
            out += ", " + std::to_string(l.aborted) + " aborted waits";
        out += " ===\nwait time:\n" + fmt::textHistogram(l.wait, "  ");
        if (!l.hold.empty())
            out += "hold time:\n" + fmt::textHistogram(l.hold, "  ");
        if (!l.paths.empty()) {
            out += "top call paths (innermost first):\n";
            for (const auto& p : l.paths)
                out += padLeft(fmt::percent(p.wait_share), 9) + padLeft(std::to_string(p.count), 9) +
                       padLeft(duration(double(p.wait_ns)), 12) + "  " + fmt::pathText(p.frames) + "\n";
        }
        if (!l.holders.empty()) {
            out += "held by (share of wait time while this stack held the lock; approximate):\n";
            for (const auto& h : l.holders)
                out += padLeft(fmt::percent(h.wait_share), 9) + padLeft(std::to_string(h.count), 9) +
                       padLeft(duration(double(h.wait_ns)), 12) + "  " + (h.owner.empty() ? "" : h.owner + " at ") +
                       fmt::pathText(h.frames) + "\n";
        }
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
                      metaLine(c.after.meta) + "\n";
    for (const auto& w : c.warnings)
        out += "WARNING: " + w + "\n";

    auto metricRows = [&](const std::vector<MetricDelta>& rows, const char* title) {
        if (rows.empty())
            return;
        out += std::string("\n") + title + "\n" + padRight("  figure", 34) + padLeft("before", 14) +
               padLeft("after", 14) + padLeft("Δ%", 10) + "   verdict\n";
        for (const auto& m : rows)
            out += padRight("  " + m.name, 34) + padLeft(fmt::metricValue(m.value.before, m.unit), 14) +
                   padLeft(fmt::metricValue(m.value.after, m.unit), 14) + padLeft(fmt::pct(m.value), 9) + "   " +
                   toString(m.verdict) + "\n";
    };
    metricRows(c.workload, "workload");
    metricRows(c.headline, "all locks");
    metricRows(c.cpu_leaves, "share of CPU samples by leaf function");

    out += "\nlocks (matched by key)\n" + padRight("  key", 34) + padLeft("type", 10) + padLeft("contended", 12) +
           padLeft("", 10) + padLeft("", 9) + padLeft("total wait", 12) + padLeft("", 12) + padLeft("", 9) +
           padLeft("avg wait", 12) + padLeft("", 12) + padLeft("", 9) + padLeft("p99 wait", 12) + padLeft("", 12) +
           padLeft("", 9) + "   verdict\n";
    size_t hidden = 0;
    for (const auto& l : c.locks) {
        if (l.hidden) {
            ++hidden;
            continue;
        }
        out += padRight("  " + fmt::truncate(l.key, 31), 34) + padLeft(l.type, 10) +
               deltaCells(l.contentions, false, 11) + deltaCells(l.total_wait_ns, true, 12) +
               deltaCells(l.avg_wait_ns, true, 12) + deltaCells(l.p99_wait_ns, true, 12) + "   " +
               sigText(l.wait_test, l.verdict) + "\n";
        if (l.has_hold)
            out += padRight("      hold", 44) + deltaCells(l.hold_count, false, 11) +
                   deltaCells(l.total_hold_ns, true, 12) + deltaCells(l.avg_hold_ns, true, 12) +
                   deltaCells(l.p99_hold_ns, true, 12) + "   hold " +
                   (l.hold_test.significant ? "changed" : "unchanged") + " (p " + fmt::pValue(l.hold_test.p_value) +
                   ")\n";
    }
    if (hidden)
        out += "  (" + std::to_string(hidden) + " locks changed less than --threshold " +
               fmt::number(c.options.threshold_pct) + "% and are hidden)\n";

    size_t shown = 0;
    for (const auto& l : c.locks) {
        if (l.hidden || shown == 5)
            continue;
        ++shown;
        out += "\n=== " + l.key + " (" + l.type + "): " + toString(l.verdict) + " ===\n";
        if (l.presence == Presence::Both)
            out += "  chi-square " + fmt::number(std::round(l.wait_test.chi_square * 100) / 100) + " on " +
                   std::to_string(l.wait_test.dof) + " dof (p " + fmt::pValue(l.wait_test.shape_p) +
                   "), rate test p " + fmt::pValue(l.wait_test.rate_p) + "\n";
        out += "wait time:\n" + fmt::textHistogramPair(l.wait_before, l.wait_after, "  ");
        if (l.has_hold)
            out += "hold time:\n" + fmt::textHistogramPair(l.hold_before, l.hold_after, "  ");
        if (!l.paths.empty()) {
            out += "call paths that changed most (wait before → after):\n";
            for (const auto& p : l.paths)
                out += padLeft(fmt::signedDuration(p.wait_ns.delta()), 13) + padLeft(fmt::pct(p.wait_ns), 9) +
                       "  " + fmt::pathText(p.frames) + "\n";
        }
    }

    if (!c.paths.empty()) {
        out += "\ndifferential call paths, all locks (wait gained + / lost -)\n";
        for (const auto& p : c.paths)
            out += padLeft(fmt::signedDuration(p.wait_ns.delta()), 13) + padLeft(fmt::pct(p.wait_ns), 9) + "  " +
                   fmt::pathText(p.frames) + "\n";
    }

    auto latency = [&](const std::vector<LatencyDelta>& rows, const char* title) {
        if (rows.empty())
            return;
        out += std::string("\n") + title + "\n" + padRight("  name", 22) + padLeft("calls", 10) +
               padLeft("", 10) + padLeft("", 9) + padLeft("avg", 12) + padLeft("", 12) + padLeft("", 9) +
               padLeft("p99", 12) + padLeft("", 12) + padLeft("", 9) + "   verdict\n";
        for (const auto& l : rows)
            out += padRight("  " + l.name + l.sampledNote(), 22) + deltaCells(l.calls, false, 10) +
                   deltaCells(l.avg_ns, true, 12) +
                   deltaCells(l.p99_ns, true, 12) + "   " + sigText(l.test, l.verdict) + "\n";
    };
    latency(c.syscalls, "syscall latency");
    latency(c.functions, "function latency");
    out += scalingTable(x.scaling, false);
    return out;
}

} // namespace lockscope::reports::detail
