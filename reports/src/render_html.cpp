// SPDX-License-Identifier: GPL-2.0-or-later
#include <algorithm>
#include <cmath>

#include "format_runs.h"
#include "format_util.h"
#include "lockscope/capture/calltree.h"
#include "lockscope/reports/change_order.h"
#include "compare_internal.h"
#include "lockscope/reports/lock_columns.h"
#include "render_internal.h"
#include "svg.h"

// One self-contained page: inline CSS, SVG and a few lines of script; no
// network access of any kind, so it can be mailed or attached to a bug.
namespace lockscope::reports::detail {

using fmt::duration;
using fmt::htmlEscape;

namespace {
const char* kStyle = R"(<style>
body{font:14px/1.4 system-ui,sans-serif;margin:24px;color:#222;background:#fff}
h1{font-size:20px}h2{font-size:17px;margin-top:28px;border-bottom:1px solid #ddd}h3{font-size:15px}
table{border-collapse:collapse;margin:8px 0}td,th{padding:3px 8px;border-bottom:1px solid #eee;text-align:right}
td:first-child,th:first-child,td.l{text-align:left}th{background:#f4f4f4}
code{font:12px monospace}.warn{background:#fff3cd;border:1px solid #e0c060;padding:6px 10px;margin:4px 0}
.note{color:#555;border-left:3px solid #ccc;padding:2px 10px;margin:4px 0}
.sides{display:grid;grid-template-columns:minmax(0,1fr) minmax(0,1fr);gap:16px}.side{border:1px solid #ddd;padding:8px;overflow-x:auto}
.side td{text-align:left;word-break:break-word}
.improved{color:#1a7f37;font-weight:bold}.regressed{color:#c62828;font-weight:bold}.muted{color:#777}
svg text{font:11px sans-serif}svg .ax{fill:#555;font-size:10px}svg .ht{font-weight:bold}
.norm{display:none}body.normalized .norm{display:inline}body.normalized .abs{display:none}
.lock{margin:12px 0;padding:6px;border-left:3px solid #ccc}button{margin:6px 0}
</style>)";

const char* kScript = R"(<script>
(function(){
  var b=document.getElementById('normalize');
  if(b){b.addEventListener('click',function(){
    document.body.classList.toggle('normalized');
    b.textContent=document.body.classList.contains('normalized')?'Show counts':'Normalize histograms';});}
  document.body.setAttribute('data-ready','1');
})();
</script>)";

std::string page(const std::string& title, const std::string& body)
{
    return "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>" + htmlEscape(title) +
           "</title>" + kStyle + "</head><body>\n" + body + kScript + "\n</body></html>\n";
}

std::string row(std::initializer_list<std::string> cells, bool header = false)
{
    std::string s = "<tr>";
    for (const auto& c : cells)
        s += (header ? "<th>" : "<td>") + c + (header ? "</th>" : "</td>");
    return s + "</tr>\n";
}

// The per-lock table's rows on lockColumn's columns, headed by their brief
// names (the section says they are waits); names escaped for HTML.
std::string lockTable(const std::vector<LockRow>& locks)
{
    using C = LockColumn;
    static const C kColumns[] = {C::Key,     C::Type,    C::Contended, C::TotalWait, C::MaxWait,
                                 C::AvgWait, C::P50Wait, C::P99Wait,   C::AvgHold,   C::Caller};
    std::string out = "<tr>";
    for (const C c : kColumns)
        out += std::string("<th>") + (c == C::Key ? "key" : lockColumn(c).brief) + "</th>";
    out += "</tr>\n";
    for (const auto& l : locks) {
        const LockFigures f = lockFigures(l);
        out += "<tr>";
        for (const C c : kColumns) {
            const std::string cell = lockColumn(c).cell(f, fmt::kPlain);
            out += "<td>" +
                   (c == C::Key ? "<code>" + htmlEscape(cell) + "</code>" +
                                      (l.nameBesideKey().empty() ? "" : " <span class=\"muted\">" + htmlEscape(l.name) + "</span>")
                    : c == C::Type   ? htmlEscape(cell)
                    : c == C::Caller ? "<code>" + htmlEscape(cell) + "</code>"
                                     : cell) +
                   "</td>";
        }
        out += "</tr>\n";
    }
    return out;
}

std::string metaTable(const Meta& m, const Stats& st, const Workload& w, const std::vector<ProbeStatus>& probes)
{
    std::string s = "<table>";
    auto kv = [&](const char* k, const std::string& v) { s += row({k, "<code>" + htmlEscape(v) + "</code>"}); };
    kv("label", m.label);
    kv("kernel", m.kernel_release);
    kv("kernel version", m.kernel_version);
    kv("build id", m.kernel_build_id);
    kv("host", m.hostname);
    kv("CPU", std::to_string(m.cpu_count) + " × " + m.cpu_model);
    kv("start", m.start_time);
    kv("duration", fmt::number(std::round(m.duration_s * 100) / 100) + " s");
    std::string cmd, wcmd;
    for (const auto& c : m.command)
        cmd += c + " ";
    for (const auto& c : w.command)
        wcmd += c + " ";
    kv("command", cmd);
    kv("workload", wcmd + (w.exit_status ? "(exit " + std::to_string(*w.exit_status) + ")" : ""));
    kv("events", std::to_string(st.events));
    kv("lost / map full", std::to_string(st.lost) + " / " + std::to_string(st.map_full));
    kv("stack failures", std::to_string(st.stack_failures));
    if (st.stacks_unsampled)
        kv("waits and holds not walked (stack budget)", std::to_string(st.stacks_unsampled));
    if (st.own_lock_events)
        kv("own probe locks left out", std::to_string(st.own_lock_events));
    if (st.impossible_holds)
        kv("impossible holds dropped", std::to_string(st.impossible_holds));
    if (st.owner_stacks_unsampled)
        kv("lock owners named without their stack (stack budget)", std::to_string(st.owner_stacks_unsampled));
    if (st.waits_untimed)
        kv("waits counted, time estimated (timing budget)", std::to_string(st.waits_untimed));
    if (st.syscalls_untimed)
        kv("syscalls counted, latency estimated (syscall budget)", std::to_string(st.syscalls_untimed));
    s += "</table><table>" + row({"probe", "target", "hook", "status"}, true);
    for (const auto& p : probes)
        s += row({htmlEscape(p.name), htmlEscape(p.target), htmlEscape(p.hook),
                  p.attached      ? std::string("attached")
                  : offByChoice(p) ? "<span class=\"muted\">off</span>" + (p.reason == kProbeDisabled ? "" : " " + htmlEscape(p.reason))
                                   : "<span class=\"regressed\">skipped</span> " + htmlEscape(p.reason)});
    return s + "</table>";
}

std::string warnings(const std::vector<std::string>& ws)
{
    std::string s;
    for (const auto& w : ws)
        s += "<div class=\"warn\">⚠ " + htmlEscape(w) + "</div>\n";
    return s;
}

// Normal sampling (the budgets): grey, not the warnings' yellow.
std::string notes(const std::vector<std::string>& ns)
{
    std::string s;
    for (const auto& n : ns)
        s += "<div class=\"note\">" + htmlEscape(n) + "</div>\n";
    return s;
}

// The verdict, its test and p-value in the title (hover) and beside it, never another test's.
std::string verdictSpan(const Judgement& j)
{
    const Verdict v = j.verdict;
    const char* cls = v == Verdict::Improved ? "improved" : v == Verdict::Regressed ? "regressed" : "muted";
    const std::string tp = fmt::testAndP(j);
    std::string title
        = j.basis.str() + (tp.empty() ? "" : ": " + tp) + (j.reason.empty() ? "" : " — " + j.reason.str());
    return std::string("<span class=\"") + cls + "\" title=\"" + htmlEscape(title) + "\">" + toString(v) +
           "</span>" + (tp.empty() ? "" : " <span class=\"muted\">(" + htmlEscape(tp) + ")</span>");
}

std::string sideCell(const MetricDelta& m, bool after)
{
    const std::string sp = fmt::spread(after ? m.after_runs : m.before_runs);
    return fmt::figureValue(after ? m.value.after : m.value.before, m.unit) +
           (sp.empty() ? "" : " <span class=\"muted\">" + sp + "</span>");
}

std::string figureRow(const std::string& label, const MetricDelta& m)
{
    return row({label, sideCell(m, false), sideCell(m, true), fmt::change(m), verdictSpan(m.judgement)});
}

template <class Frame> std::string pathCell(const std::vector<Frame>& frames)
{
    return "<td class=\"l\"><code>" + htmlEscape(fmt::pathText(frames, 10)) + "</code></td>";
}

// "Held by": spinlock holders name a path; mutex/rwsem owners (record
// --lock-owner) add the task, and their path is where the owner was.
std::string holdersTable(const std::vector<HolderRow>& holders)
{
    const bool owners = std::any_of(holders.begin(), holders.end(), [](const HolderRow& h) { return h.owner_tid; });
    std::string b = owners ? "<h4>Held by <span class=\"muted\">(the owner task when the wait began, where it was, "
                             "and the wait charged to it)</span></h4><table>" +
                                 row({"share", "waits", "wait", "owner", "owner's path (innermost first)"}, true)
                           : "<h4>Held by <span class=\"muted\">(share of wait time; approximate)</span></h4><table>" +
                                 row({"share", "waits", "wait", "holder path (innermost first)"}, true);
    // nowrap: beside a long path the browser would break "4.29 ms" and "comm/tid" apart.
    for (const auto& h : holders) {
        b += "<tr><td>" + fmt::percent(h.wait_share) + "</td><td>" + std::to_string(h.count) +
             "</td><td style=\"white-space:nowrap\">" + duration(double(h.wait_ns)) + "</td>";
        if (owners)
            b += "<td class=\"l\" style=\"white-space:nowrap\"><code>" +
                 htmlEscape(fmt::printable(h.owner.empty() ? "-" : h.owner)) + "</code></td>";
        b += pathCell(h.frames) + "</tr>";
    }
    return b + "</table>";
}

std::string scalingSection(const RenderExtras& x)
{
    if (x.scaling.empty())
        return "";
    std::string s = "<h2>Scaling</h2>";
    for (const auto& c : x.scaling)
        s += svg::scalingChart(c);
    return s;
}

std::string cell(const Delta& d, bool time)
{
    auto v = [&](double x) { return time ? duration(x) : fmt::number(x); };
    return v(d.before) + " → " + v(d.after) + " <span class=\"muted\">(" + fmt::pct(d) + ")</span>";
}
} // namespace

std::string htmlReport(const Report& r, const RenderExtras& x)
{
    std::string b = "<h1>lockscope report: " + htmlEscape(r.meta.label) + " — kernel " +
                    htmlEscape(r.meta.kernel_release) + "</h1>\n" + warnings(r.warnings) + notes(r.notes);
    b += "<table>";
    for (const auto& f : r.results)
        b += row({htmlEscape(f.name), fmt::number(f.value)});
    if (r.cpu_lock_share)
        b += row({fmt::kCpuLockLabel, fmt::percent(*r.cpu_lock_share)});
    if (r.cpu_bpf_share)
        b += row({htmlEscape(fmt::kCpuBpfLabel), fmt::percent(*r.cpu_bpf_share)});
    b += row({"contentions", std::to_string(r.total_contentions)});
    b += row({"total wait", duration(double(r.total_wait_ns))});
    b += row({"total hold", duration(double(r.total_hold_ns))});
    b += "</table><button id=\"normalize\">Normalize histograms</button>";
    if (!r.cgroups.empty()) {
        b += "<h2>By cgroup</h2><table>" + row({"cgroup", "locks", "contended", "total wait", "share", "holds", "total hold"}, true);
        for (const auto& c : r.cgroups)
            b += row({"<code>" + htmlEscape(c.cgroup) + "</code>", std::to_string(c.locks),
                      std::to_string(c.contentions), duration(double(c.wait_ns)), fmt::percent(c.wait_share),
                      std::to_string(c.holds), duration(double(c.hold_ns))});
        b += "</table>";
    }
    b += "<h2>Locks</h2><table>" + lockTable(r.locks) + "</table>";
    for (const auto& l : r.locks) {
        b += "<div class=\"lock\"><h3>" + htmlEscape(l.key) + " <span class=\"muted\">" + htmlEscape(l.type) +
             (l.nameBesideKey().empty() ? "" : ", " + htmlEscape(l.name)) + (l.cgroup.empty() ? "" : ", cgroup " + htmlEscape(l.cgroup)) +
             "</span></h3>";
        if (const std::string note = tailNote(l, exactWaitNs(r.meta)); !note.empty())
            b += "<p class=\"muted\">tails: " + htmlEscape(note) + "</p>";
        b += svg::histogram(l.wait, nullptr, "wait time");
        if (!l.hold.empty())
            b += svg::histogram(l.hold, nullptr, "hold time");
        if (!l.acquire.empty())
            b += svg::histogram(l.acquire, nullptr, "acquire time (spin in the lock call)");
        if (const std::string walked = fmt::walkedShares(l.walked_waits, l.walked_holds); !walked.empty())
            b += "<p class=\"muted\">Call paths' " + htmlEscape(walked) + ".</p>";
        b += "<table>" + row({"share", "count", "wait", "path (innermost first)"}, true);
        for (const auto& p : l.paths)
            b += "<tr><td>" + fmt::percent(p.wait_share) + "</td><td>" + std::to_string(p.count) + "</td><td>" +
                 duration(double(p.wait_ns)) + "</td>" + pathCell(p.frames) + "</tr>";
        b += "</table>";
        if (!l.holders.empty())
            b += holdersTable(l.holders);
        b += "</div>";
    }
    if (!r.syscalls.empty()) {
        b += "<h2>Syscall latency</h2><table>" + row({"syscall", "calls", "avg", "p50", "p99", "max", "errors"}, true);
        for (const auto& s : r.syscalls)
            b += row({htmlEscape(s.label()), std::to_string(s.calls), duration(double(s.latency.mean())),
                      duration(double(s.p50_ns)), duration(double(s.p99_ns)), duration(double(s.latency.max())),
                      std::to_string(s.errors)});
        b += "</table>";
        for (const auto& s : r.syscalls)
            b += svg::histogram(s.latency, nullptr, s.name + " latency");
    }
    b += scalingSection(x);
    b += "<h2>Capture</h2>" + metaTable(r.meta, r.stats, r.workload, r.probes);
    return page("lockscope report " + r.meta.label, b);
}

// The differential tree as far as the flame graph draws it: the callees of
// a frame too narrow to be drawn are left out (its width still counts), so a
// tree of 666k nodes is a few thousand.
std::vector<svg::FlameNode> flameNodes(const DiffTree& t)
{
    std::vector<svg::FlameNode> out;
    const bool useWait = !t.nodes.empty() && (t.nodes[0].before_wait_ns + t.nodes[0].after_wait_ns) > 0;
    std::vector<uint32_t> source; // out[i] is t.nodes[source[i]]
    if (!t.nodes.empty())
        source.push_back(0);
    for (size_t i = 0; i < source.size(); ++i) {
        const DiffNode& n = t.nodes[source[i]];
        const DiffFrame& frame = t.frames[n.frame];
        svg::FlameNode f;
        f.label = frame.module.empty() ? frame.function.str()
                                       : frame.function.str() + " [" + frame.module.str() + "]";
        f.before = double(useWait ? n.before_wait_ns : n.before_hold_ns);
        f.after = double(useWait ? n.after_wait_ns : n.after_hold_ns);
        if (i == 0 || svg::flameFrameDrawn(f.before + f.after, out[0].before + out[0].after))
            for (uint32_t kid : t.children(source[i])) {
                f.children.push_back(uint32_t(source.size()));
                source.push_back(kid);
            }
        out.push_back(std::move(f));
    }
    return out;
}

std::string htmlComparison(const Comparison& c, const RenderExtras& x)
{
    // The news first: the headline and the locks that changed most; the
    // warnings, the two sides' metadata and probes after them, collapsed.
    std::string b = "<h1>lockscope compare: " + htmlEscape(c.before.meta.label) + " (" +
                    htmlEscape(c.before.meta.kernel_release) + ") vs " + htmlEscape(c.after.meta.label) + " (" +
                    htmlEscape(c.after.meta.kernel_release) + ")</h1>\n";
    if (!c.warnings.empty())
        b += "<p class=\"muted\"><a href=\"#captures\">" + std::to_string(c.warnings.size()) +
             (c.warnings.size() == 1 ? " warning" : " warnings") + " about the captures</a> below.</p>";
    b += "<p>" + htmlEscape(varianceNote(c)) + "</p>";
    b += "<h2>Headline</h2><table>" +
         row({"figure", "before (±CV)", "after (±CV)", "change", "verdict (test, p)"}, true);
    for (const auto* rows : {&c.workload, &c.headline, &c.cpu_leaves})
        for (const auto& m : *rows)
            if (fmt::hasData(m))
                b += figureRow(
                    htmlEscape(rows == &c.cpu_leaves ? "CPU in " + m.name.str() : fmt::figureName(m.name)),
                    m);
    b += "</table>";
    // Most severe verdict first, then the biggest change (change_order.h, as the GUI's table).
    std::vector<const LockDelta*> order;
    for (size_t i : changedFirstOrder(c))
        order.push_back(&c.locks[i]);
    b += "<h2>Top changed locks</h2><p class=\"muted\">Matched by key, " + fmt::lockBasisNote(c) +
         "; the most severe verdict first, then the biggest change.</p><button id=\"normalize\">Normalize histograms</button><table>" +
         row({"key", "type", "figure", "before (±CV)", "after (±CV)", "change", "verdict (test, p)"}, true);
    size_t hidden = 0;
    for (const LockDelta* lp : order) {
        const LockDelta& l = *lp;
        const MetricDelta* m = judgedMetric(l);
        if (l.hidden || !m || !fmt::hasData(*m)) {
            hidden += l.hidden;
            continue;
        }
        b += row({"<code>" + htmlEscape(l.key) + "</code>", htmlEscape(l.type), htmlEscape(m->name), sideCell(*m, false),
                  sideCell(*m, true), fmt::change(*m), verdictSpan(l.judgement)});
        for (const MetricDelta* other : otherChangedFigures(l))
            b += row({"<code>" + htmlEscape(l.key) + "</code>", htmlEscape(l.type), htmlEscape(other->name),
                      sideCell(*other, false), sideCell(*other, true), fmt::change(*other),
                      verdictSpan(other->judgement)});
    }
    b += "</table>";
    if (hidden)
        b += "<p class=\"muted\">" + std::to_string(hidden) + " locks below the threshold are hidden.</p>";
    constexpr size_t kLockDetails = 10; // the rest are rows of the table above
    size_t shown = 0;
    for (const LockDelta* lp : order) {
        const LockDelta& l = *lp;
        if (l.hidden || !judgedMetric(l) || !fmt::hasData(*judgedMetric(l)))
            continue;
        if (shown++ == kLockDetails)
            break;
        b += "<div class=\"lock\"><h3>" + htmlEscape(l.key) + " — " + verdictSpan(l.judgement) + "</h3><table>" +
             row({"figure", "before (±CV)", "after (±CV)", "change", "verdict (test, p)"}, true);
        for (const auto& m : l.runs)
            b += figureRow(htmlEscape(m.name), m);
        b += "</table>";
        if (l.has_wait)
            b += svg::histogram(l.wait_before, &l.wait_after, "wait time");
        if (l.has_hold)
            b += svg::histogram(l.hold_before, &l.hold_after, "hold time");
        if (l.has_acquire)
            b += svg::histogram(l.acquire_before, &l.acquire_after, "acquire time (spin in the lock call)");
        if (!l.paths.empty()) {
            const bool wait = l.has_wait;
            b += "<table>" + row({wait ? "Δ wait" : "Δ hold", "Δ%", "path (innermost first)"}, true);
            for (const auto& p : l.paths) {
                const Delta& d = wait ? p.wait_ns : p.hold_ns;
                b += "<tr><td>" + fmt::signedDuration(d.delta()) + "</td><td>" + fmt::pct(d) + "</td>" +
                     pathCell(p.frames) + "</tr>";
            }
            b += "</table>";
        }
        b += "</div>";
    }
    b += "<h2>Differential flame graph</h2>" + svg::flameGraph(flameNodes(c.tree), true, "differential flame graph");
    if (!c.paths.empty()) {
        b += "<h2>Call paths that gained or lost wait</h2><table>" +
             row({"before", "after", "Δ", "path (innermost first)"}, true);
        for (const auto& p : c.paths)
            b += "<tr><td>" + duration(p.wait_ns.before) + "</td><td>" + duration(p.wait_ns.after) + "</td><td>" +
                 fmt::signedDuration(p.wait_ns.delta()) + "</td>" + pathCell(p.frames) + "</tr>";
        b += "</table>";
    }
    if (!c.syscalls.empty()) {
        b += "<h2>Syscall latency</h2><table>" +
             row({"syscall", "calls per run", "mean (±CV)", "", "change", "verdict (test, p)", "p99"}, true);
        for (const auto& s : c.syscalls)
            b += row({htmlEscape(s.name + s.sampledNote()), cell(s.calls, false), sideCell(s.avg_runs, false),
                      sideCell(s.avg_runs, true), fmt::change(s.avg_runs), verdictSpan(s.avg_runs.judgement),
                      cell(s.p99_ns, true)});
        b += "</table>";
        for (const auto& s : c.syscalls)
            b += svg::histogram(s.before, &s.after, s.name + " latency");
    }
    b += "<p class=\"muted\">Locks are matched by key, frames by function and module (no offsets). With two or more "
         "runs per side a verdict needs Welch's t-test across runs (one run against three or more: Student's t of "
         "the run on the other side's spread; a quasi-Poisson rate test over runs for event "
         "counts and for figures absent from one side), separated ranges (LKP), the effect floor and the absolute "
         "floor (see above); with "
         "one run a side nothing gets a verdict, and the p-values shown are event tests' (chi-square homogeneity on "
         "the log2 histograms, sparse buckets pooled, and a Poisson rate test on the counts, Bonferroni-combined), "
         "which overstate significance. " + tailMethodNote(c) + "Alpha " +
         fmt::number(c.options.alpha) + ", effects under " + fmt::number(c.options.min_effect_pct) + "% (" +
         fmt::number(c.options.min_effect_pp) + " points for percentages) are no significant change.</p>";
    b += scalingSection(x);
    b += "<h2 id=\"captures\">Captures</h2>" + warnings(c.warnings) + notes(c.notes);
    b += "<details><summary>The two sides' metadata, counters and probes</summary><div class=\"sides\"><div "
         "class=\"side\"><h3>before</h3>" +
         metaTable(c.before.meta, c.before.stats, c.before.workload, c.before.probes) +
         "</div><div class=\"side\"><h3>after</h3>" +
         metaTable(c.after.meta, c.after.stats, c.after.workload, c.after.probes) + "</div></div></details>";
    return page("lockscope compare", b);
}

} // namespace lockscope::reports::detail
