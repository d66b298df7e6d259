// SPDX-License-Identifier: GPL-2.0-or-later
#include <algorithm>
#include <cmath>
#include <future>
#include <initializer_list>
#include <string_view>

#include <nlohmann/json.hpp>

#include "lockscope/capture/virtualization.h"
#include "lockscope/reports/lock_columns.h"
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

// meta plus where it was recorded, when the capture says (older ones do not).
json metaWithVirtualization(const Meta& m)
{
    json j = meta(m);
    if (const Virtualization& v = m.virtualization; !v.kind.empty()) {
        j["virtualization"] = {{"kind", v.kind}, {"hypervisor", v.hypervisor}, {"detected_by", v.detected_by},
                               {"description", describeVirtualization(v)}};
        if (v.vcpus)
            j["virtualization"]["vcpus"] = v.vcpus;
        if (v.host_cores)
            j["virtualization"]["host_cores"] = v.host_cores;
        if (v.host_load)
            j["virtualization"]["host_load"] = *v.host_load;
    }
    return j;
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

// The lock's fields that the lock table's columns also show, named by their
// descriptors: raw numbers for machines, never the formatted cells.
void putColumns(json& j, const LockFigures& f)
{
    for (const LockColumnSpec& c : lockColumns())
        if (c.json)
            j[c.json] = c.unit == ColumnUnit::Text ? json(c.cell(f, fmt::kPlain)) : json(c.value(f));
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
              {"reason", j.reason}, {"below_effect_floor", j.below_effect_floor}, {"below_floor", j.below_floor},
              {"runs_to_decide", j.runs_to_decide}};
    o["p_value"] = j.p_value ? json(*j.p_value) : json(nullptr);
    return o;
}

json metric(const MetricDelta& m)
{
    json o = {{"name", m.name}, {"unit", m.unit}, {"value", delta(m.value)},
              {"higher_is_better", m.higher_is_better}, {"kind", toString(m.kind)}, {"directed", m.directed},
              {"verdict", toString(m.judgement.verdict)},
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

json pathDelta(const PathDelta& p)
{
    return {{"frames", p.frames}, {"wait_ns", delta(p.wait_ns)}, {"hold_ns", delta(p.hold_ns)},
            {"count", delta(p.count)}};
}

json paths(const std::vector<PathDelta>& v)
{
    json a = json::array();
    for (const auto& p : v)
        a.push_back(pathDelta(p));
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
// v as dump(2) prints it nested `depth` levels deep (JSON strings hold no raw newline).
void putIndented(std::string& out, const json& v, unsigned depth)
{
    const std::string text = v.dump(2, ' ', false, json::error_handler_t::replace); // names may not be UTF-8
    const std::string newline = "\n" + std::string(size_t{2} * depth, ' ');
    size_t from = 0;
    for (size_t nl = text.find('\n'); nl != std::string::npos; from = nl + 1, nl = text.find('\n', from)) {
        out.append(text, from, nl - from);
        out += newline;
    }
    out.append(text, from);
}

// A JSON string as dump() writes it: most names need no escaping, and
// skipping the DOM for them is most of what writing the call tree costs.
void putString(std::string& out, std::string_view v)
{
    const bool plain = std::all_of(v.begin(), v.end(), [](char ch) {
        const auto u = static_cast<unsigned char>(ch);
        return u >= 0x20 && u < 0x7f && ch != '"' && ch != '\\';
    });
    if (!plain) {
        out += json(v).dump(-1, ' ', false, json::error_handler_t::replace); // names may not be UTF-8
        return;
    }
    out += '"';
    out += v;
    out += '"';
}

// One node of the differential tree as putIndented(tree-node DOM, 2) writes
// it (members sorted, as nlohmann's objects are): 666k nodes for the
// 100k-stack pair, each a map of nine members in the DOM.
void putTreeNode(std::string& out, const DiffNode& n)
{
    const std::pair<const char*, uint64_t> numbers[] = {
        {"after_count", n.after_count},     {"after_hold_ns", n.after_hold_ns},
        {"after_wait_ns", n.after_wait_ns}, {"before_count", n.before_count},
        {"before_hold_ns", n.before_hold_ns}, {"before_wait_ns", n.before_wait_ns}};
    constexpr std::string_view sep = ",\n      \"";
    out += "{\n      \"";
    for (const auto& [name, value] : numbers) {
        out += name;
        out += "\": ";
        out += std::to_string(value);
        out += sep;
    }
    out += "function\": ";
    putString(out, n.function);
    out += sep;
    out += "module\": ";
    putString(out, n.module);
    out += sep;
    out += "parent\": ";
    out += std::to_string(n.parent);
    out += "\n    }";
}

// The text doc.dump(2) would give with each member named in `big` replaced
// (null in doc) by the array elements element(out, name, i) appends for i < count(name): the big arrays
// are converted one element at a time, so their DOM (many times the
// captures) never exists whole, and handed to sink about a MiB at a time,
// so neither does the text. The member order stays nlohmann's (sorted).
template <class Count, class Element>
void dumpStreamingArrays(const json& doc, std::initializer_list<std::string_view> big, Count count,
                         Element element, const TextSink& sink)
{
    constexpr size_t kPiece = size_t{1} << 20;
    std::string out = "{";
    out.reserve(2 * kPiece);
    auto handOver = [&] {
        sink(out);
        out.clear();
    };
    bool first = true;
    for (const auto& [key, value] : doc.items()) {
        out += first ? "\n  " : ",\n  ";
        first = false;
        out += json(key).dump(-1, ' ', false, json::error_handler_t::replace);
        out += ": ";
        const bool streamed = value.is_null() && std::find(big.begin(), big.end(), key) != big.end();
        const size_t n = streamed ? count(key) : 0;
        if (!streamed) {
            putIndented(out, value, 1);
            continue;
        }
        if (n == 0) {
            out += "[]";
            continue;
        }
        out += '[';
        // Elements in batches, every other batch made on a second thread
        // (elements only read the model), so both cores write the big arrays.
        constexpr size_t kBatch = 256;
        const std::string& name = key; // clang before 16 cannot capture a structured binding
        auto batch = [&](size_t from, size_t to) {
            std::string text;
            for (size_t i = from; i < to; ++i) {
                text += i ? ",\n    " : "\n    ";
                element(text, name, i);
            }
            return text;
        };
        for (size_t from = 0; from < n; from += 2 * kBatch) {
            const size_t mid = std::min(n, from + kBatch), to = std::min(n, from + 2 * kBatch);
            std::future<std::string> second; // no thread for a small array's empty half
            if (mid < to)
                second = std::async(std::launch::async, batch, mid, to);
            out += batch(from, mid);
            if (second.valid())
                out += second.get();
            if (out.size() >= kPiece)
                handOver();
        }
        out += "\n  ]";
    }
    out += first ? "}\n" : "\n}\n";
    handOver();
}

json lockDelta(const LockDelta& l)
{
    json j = {{"key", l.key}, {"type", l.type}, {"presence", presence(l.presence)},
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
            {"paths", paths(l.paths)}};
    if (l.has_acquire) { // record --hold with slow acquisitions only
        j["has_acquire"] = true;
        j["acquire_count"] = delta(l.acquire_count);
        j["total_acquire_ns"] = delta(l.total_acquire_ns);
        j["p99_acquire_ns"] = delta(l.p99_acquire_ns);
        j["acquire_before"] = hist(l.acquire_before);
        j["acquire_after"] = hist(l.acquire_after);
    }
    return j;
}

} // namespace

void jsonReport(const Report& r, const RenderExtras& x, const TextSink& sink)
{
    json j;
    j["format"] = "lockscope-report";
    j["version"] = 1;
    j["meta"] = metaWithVirtualization(r.meta);
    j["stats"] = stats(r.stats);
    j["workload"] = workload(r.workload);
    j["warnings"] = r.warnings;
    j["notes"] = r.notes;
    j["totals"] = {{"locks", r.lock_count}, {"contentions", r.total_contentions}, {"wait_ns", r.total_wait_ns},
                   {"hold_ns", r.total_hold_ns}};
    j["cpu_lock_share"] = r.cpu_lock_share ? json(*r.cpu_lock_share) : json(nullptr);
    // Each lock converted when it is written (dumpStreamingArrays); null marks the place.
    auto lockJson = [](const auto& l) {
        json paths = json::array();
        for (const auto& p : l.paths)
            paths.push_back({{"frames", p.frames}, {"count", p.count}, {"wait_ns", p.wait_ns}, {"hold_ns", p.hold_ns},
                             {"wait_share", p.wait_share}});
        json jl = {{"instances", l.instances}, {"aborted", l.aborted}, {"wait", hist(l.wait)},
                   {"hold", hist(l.hold)}, {"p50_hold_ns", l.p50_hold_ns}, {"p99_hold_ns", l.p99_hold_ns},
                   {"wait_share", l.wait_share}, {"paths", paths}};
        putColumns(jl, lockFigures(l)); // key, type, caller, p50 and p99 wait
        if (!l.max_wait_basis.exact || !l.p99_wait_basis.exact || !l.p999_wait_basis.exact) // sampled tails only
            jl["tail_basis"] = tailBasisJson(l);
        if (!l.name.empty())
            jl["name"] = l.name;
        if (!l.acquire.empty()) { // record --hold with slow acquisitions only
            jl["acquire"] = hist(l.acquire);
            jl["p50_acquire_ns"] = l.p50_acquire_ns;
            jl["p99_acquire_ns"] = l.p99_acquire_ns;
        }
        // Under stack sampling only: where the paths' shares come from.
        if (l.walked_waits.sampled())
            jl["walked_waits"] = {{"walked", l.walked_waits.walked}, {"all", l.walked_waits.all}};
        if (l.walked_holds.sampled())
            jl["walked_holds"] = {{"walked", l.walked_holds.walked}, {"all", l.walked_holds.all}};
        if (!l.cgroup.empty())
            jl["cgroup"] = l.cgroup;
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
            jl["holders"] = std::move(holders);
        }
        return jl;
    };
    j["locks"] = nullptr;
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
    dumpStreamingArrays(
        j, {"locks"}, [&](const std::string&) { return r.locks.size(); },
        [&](std::string& out, const std::string&, size_t i) { putIndented(out, lockJson(r.locks[i]), 2); }, sink);
}

void jsonComparison(const Comparison& c, const RenderExtras& x, const TextSink& sink)
{
    json j;
    j["format"] = "lockscope-comparison";
    j["version"] = 1;
    j["options"] = {{"alpha", c.options.alpha}, {"min_effect_pct", c.options.min_effect_pct},
                    {"min_effect_pp", c.options.min_effect_pp}, {"max_loss_gap_pp", c.options.max_loss_gap_pp},
                    {"threshold_pct", c.options.threshold_pct}, {"min_events", c.options.min_events},
                    {"floor_cpu_pct", c.options.floor_cpu_pct}, {"floor_events_per_s", c.options.floor_events_per_s},
                    {"floor_ns", c.options.floor_ns}, {"floor_events_per_op", c.options.floor_events_per_op}};
    j["per_op"] = {{"available", c.per_op}, {"leads", c.per_op_leads}, {"ops_per_s", delta(c.ops_per_s)}};
    j["runs"] = {{"before", c.runs_before}, {"after", c.runs_after}, {"variance_known", c.varianceKnown()},
                 {"note", varianceNote(c)}};
    j["quality"] = {{"before", quality(c.quality_before)}, {"after", quality(c.quality_after)}};
    for (const auto& [name, side] : {std::pair{"before", &c.before}, std::pair{"after", &c.after}})
        j[name] = {{"meta", metaWithVirtualization(side->meta)}, {"stats", stats(side->stats)}, {"workload", workload(side->workload)},
                   {"probes", probes(side->probes)}};
    j["warnings"] = c.warnings;
    j["notes"] = c.notes;
    j["headline"] = metrics(c.headline);
    j["workload"] = metrics(c.workload);
    j["cpu_leaves"] = metrics(c.cpu_leaves);
    // The big three are streamed (dumpStreamingArrays); null marks their place.
    j["locks"] = nullptr;
    j["paths"] = nullptr;
    j["syscalls"] = latencyDeltas(c.syscalls);
    j["functions"] = latencyDeltas(c.functions);
    j["tree"] = nullptr;
    j["scaling"] = scaling(x.scaling);
    auto count = [&](const std::string& key) {
        return key == "locks" ? c.locks.size() : key == "paths" ? c.paths.size() : c.tree.nodes.size();
    };
    auto element = [&](std::string& out, const std::string& key, size_t i) {
        if (key == "locks")
            putIndented(out, lockDelta(c.locks[i]), 2);
        else if (key == "paths")
            putIndented(out, pathDelta(c.paths[i]), 2);
        else
            putTreeNode(out, c.tree.nodes[i]);
    };
    dumpStreamingArrays(j, {"locks", "paths", "tree"}, count, element, sink);
}

} // namespace lockscope::reports::detail
