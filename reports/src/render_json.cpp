// SPDX-License-Identifier: GPL-2.0-or-later
#include <algorithm>
#include <cmath>
#include <functional>
#include <string_view>
#include <utility>
#include <vector>

#include "json_text.h"
#include "lockscope/capture/virtualization.h"
#include "lockscope/reports/lock_columns.h"
#include "ordered_pieces.h"
#include "render_internal.h"

// JSON for machines: the models as they are, with histograms sparse
// ([bucket, count] pairs) and every Δ spelled out so consumers need no maths.
// Written without a DOM (JsonText): members in sorted order, as nlohmann's
// DOM kept them, so the text reads as it did when a DOM made it.
namespace lockscope::reports::detail {

namespace {

void hist(JsonText& o, const Log2Hist& h)
{
    o.object().key("buckets").array();
    for (unsigned i = 0; i < Log2Hist::kBuckets; ++i)
        if (h.bucket(i))
            o.array().value(i).value(h.bucket(i)).end();
    o.end();
    o.member("count", h.count()).member("max_ns", h.max()).member("min_ns", h.min()).member("total_ns", h.total());
    o.end();
}

// A Δ; a percentage's also in percentage points ("pp").
void delta(JsonText& o, const Delta& d, bool pp = false)
{
    o.object().member("after", d.after).member("before", d.before).member("delta", d.delta()).member("pct", d.pct());
    if (pp)
        o.member("pp", d.delta());
    o.end();
}

void sig(JsonText& o, const Significance& s)
{
    o.object().member("chi_square", s.chi_square).member("dof", s.dof).member("p_value", s.p_value);
    o.member("rate_p", s.rate_p).member("shape_p", s.shape_p).member("significant", s.significant).end();
}

const char* presence(Presence p)
{
    switch (p) {
    case Presence::Both: return "both";
    case Presence::OnlyBefore: return "only_before";
    case Presence::OnlyAfter: return "only_after";
    }
    return "?";
}

// Where it was recorded only when the capture says (older ones do not).
void virtualization(JsonText& o, const Virtualization& v)
{
    o.key("virtualization").object().member("description", describeVirtualization(v));
    o.member("detected_by", v.detected_by);
    if (v.host_cores)
        o.member("host_cores", v.host_cores);
    if (v.host_load)
        o.member("host_load", *v.host_load);
    o.member("hypervisor", v.hypervisor).member("kind", v.kind);
    if (v.vcpus)
        o.member("vcpus", v.vcpus);
    o.end();
}

void meta(JsonText& o, const Meta& m)
{
    o.object().member("command", m.command).member("cpu_count", m.cpu_count).member("cpu_model", m.cpu_model);
    o.member("duration_s", m.duration_s).member("hostname", m.hostname).member("kernel_build_id", m.kernel_build_id);
    o.member("kernel_release", m.kernel_release).member("kernel_version", m.kernel_version).member("label", m.label);
    o.member("start_time", m.start_time).member("tool_version", m.tool_version);
    if (!m.virtualization.kind.empty())
        virtualization(o, m.virtualization);
    o.end();
}

void basis(JsonText& o, const TailBasis& b)
{
    o.object().member("exact", b.exact);
    if (!b.exact)
        o.member("timed", b.timed);
    o.member("verdict", b.verdict);
    if (!b.exact)
        o.member("waits", b.waits);
    o.end();
}

// What a lock's wait tail rests on (timing budget): reports/report.h LockRow.
void tailBasis(JsonText& o, const LockRow& l)
{
    o.object();
    basis(o.key("max_wait"), l.max_wait_basis);
    basis(o.key("p999_wait"), l.p999_wait_basis);
    o.member("p999_wait_ns", l.p999_wait_ns);
    basis(o.key("p99_wait"), l.p99_wait_basis);
    o.end();
}

void stats(JsonText& o, const Stats& s)
{
    // Optional members are absent when 0, as in the capture.
    o.object().member("aborted_waits", s.aborted_waits).member("events", s.events);
    if (s.impossible_holds)
        o.member("impossible_holds", s.impossible_holds);
    o.member("lost", s.lost).member("map_full", s.map_full).member("own_lock_events", s.own_lock_events);
    if (s.owner_stacks_unsampled)
        o.member("owner_stacks_unsampled", s.owner_stacks_unsampled);
    o.member("recursion_misses", s.recursion_misses).member("stack_failures", s.stack_failures);
    o.member("stacks_unsampled", s.stacks_unsampled);
    if (s.syscalls_untimed)
        o.member("syscalls_untimed", s.syscalls_untimed);
    o.member("unmatched", s.unmatched).member("waits_untimed", s.waits_untimed).end();
}

void probes(JsonText& o, const std::vector<ProbeStatus>& v)
{
    o.array();
    for (const auto& p : v)
        o.object().member("attached", p.attached).member("hook", p.hook).member("name", p.name)
            .member("reason", p.reason).member("target", p.target).end();
    o.end();
}

void workload(JsonText& o, const Workload& w)
{
    o.object().member("command", w.command).member("exit_status", w.exit_status).member("results", w.results);
    o.member("signal", w.signal).end();
}

void latencyRows(JsonText& o, const std::vector<LatencyRow>& rows)
{
    o.array();
    for (const auto& r : rows) {
        o.object().member("calls", r.calls).member("errors", r.errors);
        hist(o.key("latency"), r.latency);
        o.member("name", r.name).member("p50_ns", r.p50_ns).member("p99_ns", r.p99_ns);
        o.member("sample_period", r.sample_period).end();
    }
    o.end();
}

void runSummary(JsonText& o, const RunSummary& r)
{
    o.object().member("coeff_var_pct", r.coeffVarPct()).member("max", r.max).member("mean", r.mean);
    o.member("min", r.min).member("n", r.n).member("stddev", r.stddev).end();
}

// The verdict with the test that produced it and that test's p-value.
void judgement(JsonText& o, const Judgement& j)
{
    o.object().member("basis", j.basis).member("below_effect_floor", j.below_effect_floor);
    o.member("below_floor", j.below_floor).member("p_value", j.p_value).member("reason", j.reason.str());
    o.member("runs_to_decide", j.runs_to_decide).member("test", toString(j.test));
    o.member("verdict", toString(j.verdict)).end();
}

void runsTest(JsonText& o, const std::optional<RunTest>& t)
{
    if (!t) {
        o.value(nullptr);
        return;
    }
    o.object().member("df", t->df).member("p_value", t->p_value).member("ranges_separate", t->ranges_separate);
    o.member("t", t->t).member("test", "welch_t").end(); // t is null when not finite
}

void metric(JsonText& o, const MetricDelta& m)
{
    o.object();
    runSummary(o.key("after_runs"), m.after_runs);
    runSummary(o.key("before_runs"), m.before_runs);
    o.member("directed", m.directed).member("higher_is_better", m.higher_is_better);
    judgement(o.key("judgement"), m.judgement);
    o.member("kind", toString(m.kind)).member("name", m.name);
    runsTest(o.key("runs_test"), m.runs_test);
    if (m.tail_basis && !m.tail_basis->exact)
        basis(o.key("tail_basis"), *m.tail_basis);
    o.member("unit", m.unit);
    delta(o.key("value"), m.value, m.isPercent());
    o.member("verdict", toString(m.judgement.verdict)).end();
}

void metrics(JsonText& o, const std::vector<MetricDelta>& v)
{
    o.array();
    for (const auto& m : v)
        metric(o, m);
    o.end();
}

void quality(JsonText& o, const DataQuality& q)
{
    o.object().member("events", q.events).member("lock_events", q.lock_events);
    o.member("lost", q.lost).member("lost_pct", q.lostPct());
    o.member("stack_failure_pct", q.stackFailurePct()).member("stack_failures", q.stack_failures);
    o.member("untimed_pct", q.untimedPct()).member("waits", q.waits).member("waits_untimed", q.waits_untimed).end();
}

void pathDelta(JsonText& o, const PathDelta& p)
{
    o.object();
    delta(o.key("count"), p.count);
    o.member("frames", p.frames);
    delta(o.key("hold_ns"), p.hold_ns);
    delta(o.key("wait_ns"), p.wait_ns);
    o.end();
}

void latencyDeltas(JsonText& o, const std::vector<LatencyDelta>& v)
{
    o.array();
    for (const auto& l : v) {
        o.object();
        hist(o.key("after"), l.after);
        delta(o.key("avg_ns"), l.avg_ns);
        metric(o.key("avg_runs"), l.avg_runs);
        hist(o.key("before"), l.before);
        delta(o.key("calls"), l.calls);
        delta(o.key("errors"), l.errors);
        judgement(o.key("judgement"), l.avg_runs.judgement);
        o.member("name", l.name);
        delta(o.key("p99_ns"), l.p99_ns);
        o.member("presence", presence(l.presence));
        o.key("sample_period").array().value(l.sample_before).value(l.sample_after).end();
        sig(o.key("test"), l.test);
        o.member("verdict", toString(l.avg_runs.judgement.verdict)).end();
    }
    o.end();
}

void scaling(JsonText& o, const std::vector<ScalingChart>& charts)
{
    o.array();
    for (const auto& c : charts) {
        o.object().key("series").array();
        for (const auto& s : c.series) {
            o.object().member("name", s.name).key("points").array();
            for (const auto& p : s.points)
                o.array().value(p.x).value(p.y).end();
            o.end().end();
        }
        o.end().member("title", c.title).member("x_label", c.x_label).member("y_label", c.y_label).end();
    }
    o.end();
}

// A document's big array (a member of the top-level object), its elements
// made in pieces of about kPiece bytes (sized by the first element) on
// every core (makeInOrder: elements only read the model); the text goes to
// sink a piece at a time, so it never exists whole.
template <class Element>
void streamArray(JsonText& o, std::string& out, size_t n, Element element, const TextSink& sink)
{
    constexpr size_t kPiece = size_t{256} << 10, kMostPerPiece = 4096;
    o.external();
    if (n == 0) {
        out += "[]";
        return;
    }
    // One writer per piece: each element leaves it as it found it, and a
    // writer per element was two allocations per call-tree node.
    auto put = [&](std::string& text, JsonText& e, size_t i) {
        text += i ? ",\n    " : "\n    ";
        element(e, i);
    };
    out += '[';
    const size_t before = out.size();
    {
        JsonText first(out, 2);
        put(out, first, 0);
    }
    const size_t perPiece = std::clamp<size_t>(kPiece / (out.size() - before), 1, kMostPerPiece);
    sink(out);
    out.clear();
    makeInOrder(
        (n - 1 + perPiece - 1) / perPiece,
        [&](size_t piece, std::string& text) {
            JsonText e(text, 2);
            const size_t from = 1 + piece * perPiece;
            for (size_t i = from; i < std::min(n, from + perPiece); ++i)
                put(text, e, i);
        },
        [&](const std::string& text) { sink(text); });
    out += "\n  ]";
}

void lockDelta(JsonText& o, const LockDelta& l)
{
    o.object();
    if (l.has_acquire) { // record --hold with slow acquisitions only
        hist(o.key("acquire_after"), l.acquire_after);
        hist(o.key("acquire_before"), l.acquire_before);
        delta(o.key("acquire_count"), l.acquire_count);
    }
    if (!l.also_keyed.empty()) // only where a run keyed it by another of its callers
        o.member("also_keyed", l.also_keyed);
    delta(o.key("avg_hold_ns"), l.avg_hold_ns);
    delta(o.key("avg_wait_ns"), l.avg_wait_ns);
    delta(o.key("contentions"), l.contentions);
    if (l.has_acquire)
        o.member("has_acquire", true);
    o.member("has_hold", l.has_hold).member("has_wait", l.has_wait).member("hidden", l.hidden);
    hist(o.key("hold_after"), l.hold_after);
    hist(o.key("hold_before"), l.hold_before);
    delta(o.key("hold_count"), l.hold_count);
    sig(o.key("hold_test"), l.hold_test);
    judgement(o.key("judgement"), l.judgement);
    o.member("key", l.key);
    delta(o.key("max_wait_ns"), l.max_wait_ns);
    delta(o.key("p50_wait_ns"), l.p50_wait_ns);
    if (l.has_acquire)
        delta(o.key("p99_acquire_ns"), l.p99_acquire_ns);
    delta(o.key("p99_hold_ns"), l.p99_hold_ns);
    delta(o.key("p99_wait_ns"), l.p99_wait_ns);
    o.key("paths").array();
    for (const auto& p : l.paths)
        pathDelta(o, p);
    o.end().member("presence", presence(l.presence));
    metrics(o.key("runs"), l.runs);
    if (l.has_acquire)
        delta(o.key("total_acquire_ns"), l.total_acquire_ns);
    delta(o.key("total_hold_ns"), l.total_hold_ns);
    delta(o.key("total_wait_ns"), l.total_wait_ns);
    o.member("type", l.type).member("verdict", toString(l.judgement.verdict));
    hist(o.key("wait_after"), l.wait_after);
    hist(o.key("wait_before"), l.wait_before);
    sig(o.key("wait_test"), l.wait_test);
    o.end();
}

// An object some of whose members are only known at run time (the lock
// table's columns among the lock's own figures): sorted, then written.
class SortedMembers {
public:
    template <class F> void add(std::string_view key, F write) { members_.emplace_back(key, std::move(write)); }
    template <class T> void value(std::string_view key, T v)
    {
        add(key, [v = std::move(v)](JsonText& o) { o.value(v); });
    }
    void write(JsonText& o)
    {
        std::sort(members_.begin(), members_.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
        o.object();
        for (const auto& [key, write] : members_)
            write(o.key(key));
        o.end();
    }

private:
    std::vector<std::pair<std::string_view, std::function<void(JsonText&)>>> members_;
};

void walked(JsonText& o, const WalkedShare& w)
{
    o.object().member("all", w.all).member("walked", w.walked).end();
}

void reportLock(JsonText& o, const LockRow& l)
{
    SortedMembers m;
    // The lock's fields that the lock table's columns also show, named by
    // their descriptors: raw numbers for machines, never the formatted cells.
    const LockFigures f = lockFigures(l);
    for (const LockColumnSpec& c : lockColumns())
        if (c.json) {
            if (c.unit == ColumnUnit::Text)
                m.value(c.json, c.cell(f, fmt::kPlain));
            else
                m.value(c.json, c.value(f));
        }
    m.value("instances", l.instances);
    m.value("aborted", l.aborted);
    m.add("wait", [&](JsonText& j) { hist(j, l.wait); });
    m.add("hold", [&](JsonText& j) { hist(j, l.hold); });
    m.value("p50_hold_ns", l.p50_hold_ns);
    m.value("p99_hold_ns", l.p99_hold_ns);
    m.value("wait_share", l.wait_share);
    m.add("paths", [&](JsonText& j) {
        j.array();
        for (const auto& p : l.paths)
            j.object().member("count", p.count).member("frames", p.frames).member("hold_ns", p.hold_ns)
                .member("wait_ns", p.wait_ns).member("wait_share", p.wait_share).end();
        j.end();
    });
    if (!l.max_wait_basis.exact || !l.p99_wait_basis.exact || !l.p999_wait_basis.exact) // sampled tails only
        m.add("tail_basis", [&](JsonText& j) { tailBasis(j, l); });
    if (!l.name.empty())
        m.value("name", l.name);
    if (!l.acquire.empty()) { // record --hold with slow acquisitions only
        m.add("acquire", [&](JsonText& j) { hist(j, l.acquire); });
        m.value("p50_acquire_ns", l.p50_acquire_ns);
        m.value("p99_acquire_ns", l.p99_acquire_ns);
    }
    // Under stack sampling only: where the paths' shares come from.
    if (l.walked_waits.sampled())
        m.add("walked_waits", [&](JsonText& j) { walked(j, l.walked_waits); });
    if (l.walked_holds.sampled())
        m.add("walked_holds", [&](JsonText& j) { walked(j, l.walked_holds); });
    if (!l.cgroup.empty())
        m.value("cgroup", l.cgroup);
    if (!l.holders.empty()) // holder-stack captures only: older report readers never see the key
        m.add("holders", [&](JsonText& j) {
            j.array();
            for (const auto& h : l.holders) {
                j.object().member("count", h.count).member("frames", h.frames);
                if (h.owner_tid) // lock owners (record --lock-owner)
                    j.member("owner_comm", h.owner_comm).member("owner_tid", *h.owner_tid);
                j.member("wait_ns", h.wait_ns).member("wait_share", h.wait_share).end();
            }
            j.end();
        });
    m.write(o);
}

void cgroups(JsonText& o, const std::vector<CgroupRow>& rows)
{
    o.array();
    for (const auto& c : rows)
        o.object().member("cgroup", c.cgroup).member("contentions", c.contentions).member("hold_ns", c.hold_ns)
            .member("holds", c.holds).member("locks", c.locks).member("wait_ns", c.wait_ns)
            .member("wait_share", c.wait_share).end();
    o.end();
}

void treeNode(JsonText& o, const DiffTree& tree, uint32_t id)
{
    const DiffNode& n = tree.nodes[id];
    o.object().member("after_count", n.after_count).member("after_hold_ns", n.after_hold_ns);
    o.member("after_wait_ns", n.after_wait_ns).member("before_count", n.before_count);
    o.member("before_hold_ns", n.before_hold_ns).member("before_wait_ns", n.before_wait_ns);
    o.member("function", tree.function(id).str()).member("module", tree.module(id).str());
    o.member("parent", n.parent).end();
}

void side(JsonText& o, const Side& s)
{
    o.object();
    meta(o.key("meta"), s.meta);
    probes(o.key("probes"), s.probes);
    stats(o.key("stats"), s.stats);
    workload(o.key("workload"), s.workload);
    o.end();
}

void options(JsonText& o, const CompareOptions& c)
{
    o.object().member("alpha", c.alpha).member("floor_cpu_pct", c.floor_cpu_pct);
    o.member("floor_events_per_op", c.floor_events_per_op).member("floor_events_per_s", c.floor_events_per_s);
    o.member("floor_ns", c.floor_ns).member("max_loss_gap_pp", c.max_loss_gap_pp);
    o.member("min_effect_pct", c.min_effect_pct).member("min_effect_pp", c.min_effect_pp);
    o.member("min_events", c.min_events).member("threshold_pct", c.threshold_pct).end();
}

void finish(std::string& out, const TextSink& sink)
{
    out += '\n';
    sink(out);
}

} // namespace

void jsonReport(const Report& r, const RenderExtras& x, const TextSink& sink)
{
    std::string out;
    JsonText o(out);
    o.object();
    if (!r.cgroups.empty()) // per-cgroup captures only
        cgroups(o.key("cgroups"), r.cgroups);
    if (r.cpu_bpf_share)
        o.member("cpu_bpf_share", r.cpu_bpf_share);
    o.member("cpu_lock_share", r.cpu_lock_share).member("format", "lockscope-report");
    latencyRows(o.key("functions"), r.functions);
    streamArray(o.key("locks"), out, r.locks.size(), [&](JsonText& e, size_t i) { reportLock(e, r.locks[i]); },
                sink);
    meta(o.key("meta"), r.meta);
    o.member("notes", r.notes);
    probes(o.key("probes"), r.probes);
    scaling(o.key("scaling"), x.scaling);
    stats(o.key("stats"), r.stats);
    latencyRows(o.key("syscalls"), r.syscalls);
    o.key("totals").object().member("contentions", r.total_contentions).member("hold_ns", r.total_hold_ns);
    o.member("locks", r.lock_count).member("wait_ns", r.total_wait_ns).end();
    o.member("version", 1).member("warnings", r.warnings);
    workload(o.key("workload"), r.workload);
    o.end();
    finish(out, sink);
}

void jsonComparison(const Comparison& c, const RenderExtras& x, const TextSink& sink)
{
    std::string out;
    JsonText o(out);
    o.object();
    side(o.key("after"), c.after);
    side(o.key("before"), c.before);
    metrics(o.key("cpu_leaves"), c.cpu_leaves);
    o.member("format", "lockscope-comparison");
    latencyDeltas(o.key("functions"), c.functions);
    metrics(o.key("headline"), c.headline);
    streamArray(o.key("locks"), out, c.locks.size(), [&](JsonText& e, size_t i) { lockDelta(e, c.locks[i]); },
                sink);
    o.member("notes", c.notes);
    options(o.key("options"), c.options);
    streamArray(o.key("paths"), out, c.paths.size(), [&](JsonText& e, size_t i) { pathDelta(e, c.paths[i]); },
                sink);
    o.key("per_op").object().member("available", c.per_op).member("leads", c.per_op_leads);
    delta(o.key("ops_per_s"), c.ops_per_s);
    o.end().key("quality").object();
    quality(o.key("after"), c.quality_after);
    quality(o.key("before"), c.quality_before);
    o.end().key("runs").object().member("after", c.runs_after).member("before", c.runs_before);
    o.member("note", varianceNote(c)).member("variance_known", c.varianceKnown()).end();
    scaling(o.key("scaling"), x.scaling);
    latencyDeltas(o.key("syscalls"), c.syscalls);
    streamArray(
        o.key("tree"), out, c.tree.nodes.size(),
        [&](JsonText& e, size_t i) { treeNode(e, c.tree, static_cast<uint32_t>(i)); }, sink);
    o.member("version", 1).member("warnings", c.warnings);
    metrics(o.key("workload"), c.workload);
    o.end();
    finish(out, sink);
}

} // namespace lockscope::reports::detail
