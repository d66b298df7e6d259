// SPDX-License-Identifier: GPL-2.0-or-later
#include <cmath>

#include <nlohmann/json.hpp>

#include "render_internal.h"

// JSON for machines: the models as they are, with histograms sparse
// ([bucket, count] pairs) and every Δ spelled out so consumers need no maths.
namespace lockscope::reports::detail {

using nlohmann::json;

namespace {
json hist(const Log2Hist& h)
{
    json buckets = json::array();
    for (unsigned i = 0; i < Log2Hist::kBuckets; ++i)
        if (h.buckets()[i])
            buckets.push_back({i, h.buckets()[i]});
    return {{"count", h.count()}, {"total_ns", h.total()}, {"min_ns", h.min()}, {"max_ns", h.max()},
            {"buckets", buckets}};
}

json delta(const Delta& d)
{
    json j = {{"before", d.before}, {"after", d.after}, {"delta", d.delta()}};
    const auto p = d.pct();
    j["pct"] = p ? json(*p) : json(nullptr);
    return j;
}

json sig(const Significance& s)
{
    return {{"p_value", s.p_value}, {"shape_p", s.shape_p}, {"rate_p", s.rate_p}, {"chi_square", s.chi_square},
            {"dof", s.dof}, {"significant", s.significant}};
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

json meta(const Meta& m)
{
    return {{"label", m.label}, {"tool_version", m.tool_version}, {"kernel_release", m.kernel_release},
            {"kernel_version", m.kernel_version}, {"kernel_build_id", m.kernel_build_id},
            {"hostname", m.hostname}, {"cpu_model", m.cpu_model}, {"cpu_count", m.cpu_count},
            {"start_time", m.start_time}, {"duration_s", m.duration_s}, {"command", m.command}};
}

json basisJson(const TailBasis& b)
{
    json j { { "exact", b.exact }, { "verdict", b.verdict } };
    if (!b.exact)
        j.update({ { "timed", b.timed }, { "waits", b.waits } });
    return j;
}

// What a lock's wait tail rests on (timing budget): reports/report.h LockRow.
json tailBasisJson(const LockRow& l)
{
    return { { "p99_wait", basisJson(l.p99_wait_basis) }, { "p999_wait", basisJson(l.p999_wait_basis) },
        { "p999_wait_ns", l.p999_wait_ns }, { "max_wait", basisJson(l.max_wait_basis) } };
}

json stats(const Stats& s)
{
    json j {{"events", s.events}, {"lost", s.lost}, {"map_full", s.map_full}, {"stack_failures", s.stack_failures},
            {"aborted_waits", s.aborted_waits}, {"unmatched", s.unmatched}, {"recursion_misses", s.recursion_misses},
            {"stacks_unsampled", s.stacks_unsampled}, {"own_lock_events", s.own_lock_events},
            {"waits_untimed", s.waits_untimed}};
    if (s.syscalls_untimed) // absent = 0, as in the capture
        j["syscalls_untimed"] = s.syscalls_untimed;
    if (s.impossible_holds)
        j["impossible_holds"] = s.impossible_holds;
    if (s.owner_stacks_unsampled)
        j["owner_stacks_unsampled"] = s.owner_stacks_unsampled;
    return j;
}

json probes(const std::vector<ProbeStatus>& v)
{
    json a = json::array();
    for (const auto& p : v)
        a.push_back({{"name", p.name}, {"target", p.target}, {"hook", p.hook}, {"attached", p.attached},
                     {"reason", p.reason}});
    return a;
}

json workload(const Workload& w)
{
    json j = {{"command", w.command}, {"results", w.results}};
    j["exit_status"] = w.exit_status ? json(*w.exit_status) : json(nullptr);
    j["signal"] = w.signal ? json(*w.signal) : json(nullptr);
    return j;
}

json latencyRows(const std::vector<LatencyRow>& rows)
{
    json a = json::array();
    for (const auto& r : rows)
        a.push_back({{"name", r.name}, {"latency", hist(r.latency)}, {"p50_ns", r.p50_ns}, {"p99_ns", r.p99_ns},
                     {"errors", r.errors}, {"calls", r.calls}, {"sample_period", r.sample_period}});
    return a;
}

json runSummary(const RunSummary& r)
{
    return {{"n", r.n}, {"mean", r.mean}, {"stddev", r.stddev}, {"coeff_var_pct", r.coeffVarPct()},
            {"min", r.min}, {"max", r.max}};
}

// The verdict with the test that produced it and that test's p-value.
json judgement(const Judgement& j)
{
    json o = {{"verdict", toString(j.verdict)}, {"test", toString(j.test)}, {"basis", j.basis},
              {"reason", j.reason}, {"below_effect_floor", j.below_effect_floor}};
    o["p_value"] = j.p_value ? json(*j.p_value) : json(nullptr);
    return o;
}

json metric(const MetricDelta& m)
{
    json o = {{"name", m.name}, {"unit", m.unit}, {"value", delta(m.value)},
              {"higher_is_better", m.higher_is_better}, {"verdict", toString(m.judgement.verdict)},
              {"judgement", judgement(m.judgement)}, {"before_runs", runSummary(m.before_runs)},
              {"after_runs", runSummary(m.after_runs)}};
    if (m.isPercent())
        o["value"]["pp"] = m.value.delta();
    if (m.tail_basis && !m.tail_basis->exact)
        o["tail_basis"] = basisJson(*m.tail_basis);
    if (m.runs_test)
        o["runs_test"] = {{"test", "welch_t"}, {"t", std::isfinite(m.runs_test->t) ? json(m.runs_test->t) : json(nullptr)},
                          {"df", m.runs_test->df}, {"p_value", m.runs_test->p_value},
                          {"ranges_separate", m.runs_test->ranges_separate}};
    else
        o["runs_test"] = nullptr;
    return o;
}

json metrics(const std::vector<MetricDelta>& v)
{
    json a = json::array();
    for (const auto& m : v)
        a.push_back(metric(m));
    return a;
}

json quality(const DataQuality& q)
{
    return {{"events", q.events}, {"lost", q.lost}, {"stack_failures", q.stack_failures}, {"waits", q.waits},
            {"waits_untimed", q.waits_untimed}, {"lost_pct", q.lostPct()},
            {"stack_failure_pct", q.stackFailurePct()}, {"untimed_pct", q.untimedPct()}};
}

json paths(const std::vector<PathDelta>& v)
{
    json a = json::array();
    for (const auto& p : v)
        a.push_back({{"frames", p.frames}, {"wait_ns", delta(p.wait_ns)}, {"hold_ns", delta(p.hold_ns)},
                     {"count", delta(p.count)}});
    return a;
}

json latencyDeltas(const std::vector<LatencyDelta>& v)
{
    json a = json::array();
    for (const auto& l : v)
        a.push_back({{"name", l.name}, {"presence", presence(l.presence)}, {"calls", delta(l.calls)},
                     {"avg_ns", delta(l.avg_ns)}, {"p99_ns", delta(l.p99_ns)}, {"errors", delta(l.errors)},
                     {"test", sig(l.test)}, {"verdict", toString(l.avg_runs.judgement.verdict)},
                     {"judgement", judgement(l.avg_runs.judgement)}, {"avg_runs", metric(l.avg_runs)},
                     {"before", hist(l.before)},
                     {"after", hist(l.after)}, {"sample_period", {l.sample_before, l.sample_after}}});
    return a;
}

json scaling(const std::vector<ScalingChart>& charts)
{
    json a = json::array();
    for (const auto& c : charts) {
        json series = json::array();
        for (const auto& s : c.series) {
            json pts = json::array();
            for (const auto& p : s.points)
                pts.push_back({p.x, p.y});
            series.push_back({{"name", s.name}, {"points", pts}});
        }
        a.push_back({{"title", c.title}, {"x_label", c.x_label}, {"y_label", c.y_label}, {"series", series}});
    }
    return a;
}
} // namespace

std::string jsonReport(const Report& r, const RenderExtras& x)
{
    json j;
    j["format"] = "lockscope-report";
    j["version"] = 1;
    j["meta"] = meta(r.meta);
    j["stats"] = stats(r.stats);
    j["workload"] = workload(r.workload);
    j["warnings"] = r.warnings;
    j["totals"] = {{"locks", r.lock_count}, {"contentions", r.total_contentions}, {"wait_ns", r.total_wait_ns},
                   {"hold_ns", r.total_hold_ns}};
    j["cpu_lock_share"] = r.cpu_lock_share ? json(*r.cpu_lock_share) : json(nullptr);
    json locks = json::array();
    for (const auto& l : r.locks) {
        json paths = json::array();
        for (const auto& p : l.paths)
            paths.push_back({{"frames", p.frames}, {"count", p.count}, {"wait_ns", p.wait_ns}, {"hold_ns", p.hold_ns},
                             {"wait_share", p.wait_share}});
        locks.push_back({{"key", l.key}, {"type", l.type}, {"caller", l.caller}, {"instances", l.instances},
                         {"aborted", l.aborted}, {"wait", hist(l.wait)}, {"hold", hist(l.hold)},
                         {"p50_wait_ns", l.p50_wait_ns}, {"p99_wait_ns", l.p99_wait_ns},
                         {"p50_hold_ns", l.p50_hold_ns}, {"p99_hold_ns", l.p99_hold_ns},
                         {"wait_share", l.wait_share}, {"paths", paths}});
        if (!l.max_wait_basis.exact || !l.p99_wait_basis.exact || !l.p999_wait_basis.exact) // sampled tails only
            locks.back()["tail_basis"] = tailBasisJson(l);
        if (!l.name.empty())
            locks.back()["name"] = l.name;
        if (!l.cgroup.empty())
            locks.back()["cgroup"] = l.cgroup;
        if (!l.holders.empty()) { // holder-stack captures only: older report readers never see the key
            json holders = json::array();
            for (const auto& h : l.holders) {
                holders.push_back({{"frames", h.frames}, {"count", h.count}, {"wait_ns", h.wait_ns},
                                   {"wait_share", h.wait_share}});
                if (h.owner_tid) { // lock owners (record --lock-owner)
                    holders.back()["owner_tid"] = *h.owner_tid;
                    holders.back()["owner_comm"] = h.owner_comm;
                }
            }
            locks.back()["holders"] = std::move(holders);
        }
    }
    j["locks"] = locks;
    if (!r.cgroups.empty()) { // per-cgroup captures only
        json cgroups = json::array();
        for (const auto& c : r.cgroups)
            cgroups.push_back({{"cgroup", c.cgroup}, {"locks", c.locks}, {"contentions", c.contentions},
                               {"wait_ns", c.wait_ns}, {"wait_share", c.wait_share}, {"holds", c.holds},
                               {"hold_ns", c.hold_ns}});
        j["cgroups"] = std::move(cgroups);
    }
    j["syscalls"] = latencyRows(r.syscalls);
    j["functions"] = latencyRows(r.functions);
    j["probes"] = probes(r.probes);
    j["scaling"] = scaling(x.scaling);
    return j.dump(2, ' ', false, json::error_handler_t::replace) + "\n"; // names from importers may not be UTF-8
}

std::string jsonComparison(const Comparison& c, const RenderExtras& x)
{
    json j;
    j["format"] = "lockscope-comparison";
    j["version"] = 1;
    j["options"] = {{"alpha", c.options.alpha}, {"min_effect_pct", c.options.min_effect_pct},
                    {"min_effect_pp", c.options.min_effect_pp}, {"max_loss_gap_pp", c.options.max_loss_gap_pp},
                    {"threshold_pct", c.options.threshold_pct}, {"min_events", c.options.min_events}};
    j["runs"] = {{"before", c.runs_before}, {"after", c.runs_after}, {"variance_known", c.varianceKnown()},
                 {"note", varianceNote(c)}};
    j["quality"] = {{"before", quality(c.quality_before)}, {"after", quality(c.quality_after)}};
    for (const auto& [name, side] : {std::pair{"before", &c.before}, std::pair{"after", &c.after}})
        j[name] = {{"meta", meta(side->meta)}, {"stats", stats(side->stats)}, {"workload", workload(side->workload)},
                   {"probes", probes(side->probes)}};
    j["warnings"] = c.warnings;
    j["headline"] = metrics(c.headline);
    j["workload"] = metrics(c.workload);
    j["cpu_leaves"] = metrics(c.cpu_leaves);
    json locks = json::array();
    for (const auto& l : c.locks)
        locks.push_back({{"key", l.key}, {"type", l.type}, {"presence", presence(l.presence)},
                         {"verdict", toString(l.judgement.verdict)}, {"judgement", judgement(l.judgement)},
                         {"runs", metrics(l.runs)}, {"has_wait", l.has_wait}, {"has_hold", l.has_hold},
                         {"hidden", l.hidden},
                         {"contentions", delta(l.contentions)}, {"total_wait_ns", delta(l.total_wait_ns)},
                         {"avg_wait_ns", delta(l.avg_wait_ns)}, {"p50_wait_ns", delta(l.p50_wait_ns)},
                         {"p99_wait_ns", delta(l.p99_wait_ns)}, {"max_wait_ns", delta(l.max_wait_ns)},
                         {"hold_count", delta(l.hold_count)}, {"total_hold_ns", delta(l.total_hold_ns)},
                         {"avg_hold_ns", delta(l.avg_hold_ns)}, {"p99_hold_ns", delta(l.p99_hold_ns)},
                         {"wait_test", sig(l.wait_test)}, {"hold_test", sig(l.hold_test)},
                         {"wait_before", hist(l.wait_before)}, {"wait_after", hist(l.wait_after)},
                         {"hold_before", hist(l.hold_before)}, {"hold_after", hist(l.hold_after)},
                         {"paths", paths(l.paths)}});
    j["locks"] = locks;
    j["paths"] = paths(c.paths);
    j["syscalls"] = latencyDeltas(c.syscalls);
    j["functions"] = latencyDeltas(c.functions);
    json nodes = json::array();
    for (const auto& n : c.tree.nodes)
        nodes.push_back({{"function", n.function}, {"module", n.module}, {"parent", n.parent},
                         {"before_wait_ns", n.before_wait_ns}, {"after_wait_ns", n.after_wait_ns},
                         {"before_hold_ns", n.before_hold_ns}, {"after_hold_ns", n.after_hold_ns},
                         {"before_count", n.before_count}, {"after_count", n.after_count}});
    j["tree"] = nodes;
    j["scaling"] = scaling(x.scaling);
    return j.dump(2, ' ', false, json::error_handler_t::replace) + "\n"; // names from importers may not be UTF-8
}

} // namespace lockscope::reports::detail
