// SPDX-License-Identifier: GPL-2.0-or-later
// The JSON renderers write without a DOM (reports/src/json_text.h): what
// they write must be byte for byte the layout test::jsonLayout makes of the
// same document from a DOM, every optional member and awkward number included.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>

#include <nlohmann/json.hpp>

#include "json_text.h"
#include "lockscope/capture/io.h"
#include "lockscope/reports/compare.h"
#include "lockscope/reports/render.h"
#include "lockscope/reports/report.h"
#include "test_support.h"

using namespace lockscope;
using namespace lockscope::reports;
using nlohmann::json;

namespace {

// Doubles nlohmann writes in each of its forms: whole, fixed, tiny and huge
// exponents, the extremes, negative zero, a sum that does not round-trip
// in fewer than 17 digits; non-finite ones become null. Whole numbers on
// both sides of 1e15, where nlohmann turns to exponents (the writer's own
// path for whole numbers ends there).
const double kAwkward[] = {0.0, -0.0, 1.0, 0.1 + 0.2, 1e-5, 123456.789, 1e15, 1e16, 1.5e21, -2.5e-300,
                           5e-324, std::numeric_limits<double>::max(), std::nan(""),
                           std::numeric_limits<double>::infinity(), -7.0, 48519.0, 1e15 - 1, -(1e15 - 1), -1e15,
                           9007199254740993.0, 0x1p62, -0x1p63, 0.5, -1e-300};

void expectTheDomsLayout(const std::string& out)
{
    EXPECT_EQ(out, test::jsonLayout(json::parse(out)) + "\n");
}

Virtualization everyVirtualizationField()
{
    Virtualization v;
    v.kind = "kvm";
    v.hypervisor = "KVM";
    v.detected_by = "lab";
    v.vcpus = 4;
    v.host_cores = 2;
    v.host_load = 1.25;
    return v;
}

Capture withAcquires()
{
    Capture c = readCapture(test::fixture("baseline.lockscope.json"));
    c.meta.virtualization = everyVirtualizationField();
    c.meta.filters["acquire_min_ns"] = "1000";
    Lock& l = c.locks.front();
    l.sites.front().acquire.add(3000, 40);
    l.sites.front().acquire.add(48000, 10);
    l.acquire = l.sites.front().acquire;
    return c;
}

LatencyRow latencyRow()
{
    LatencyRow r;
    r.name = "semtimedop";
    r.latency.add(1000, 3);
    r.p50_ns = r.p99_ns = 1000;
    r.calls = 48;
    r.sample_period = 16;
    return r;
}

RenderExtras scalingExtras()
{
    RenderExtras x;
    ScalingChart chart;
    chart.title = "semop";
    for (const double y : kAwkward)
        chart.series.push_back({"s", {{1.0, y}, {2.0, 3.0}}, });
    x.scaling.push_back(chart);
    return x;
}

// A report with every optional member the renderer knows set on its first lock.
Report everyReportMember()
{
    Report r = buildReport(withAcquires());
    LockRow& l = r.locks.at(0);
    l.name = "sem_array.sem_perm.lock";
    l.cgroup = "/sys/fs/cgroup/a";
    l.walked_waits = {10, 40};
    l.walked_holds = {3, 9};
    l.max_wait_basis = { .timed = 12, .waits = 1200, .exact = false, .verdict = false };
    l.holders.push_back({{"holder_fn", "entry"}, 7, 9000, 0.25, std::nullopt, "", ""});
    l.holders.push_back({{"owner_fn"}, 3, 1000, 0.5, 42u, "worker", "worker/42"});
    l.wait_share = 0.1 + 0.2;
    r.cgroups.push_back({.cgroup = "/a", .locks = 1, .contentions = 5, .wait_ns = 10, .wait_share = 1.0,
                         .holds = 2, .hold_ns = 3});
    r.stats.syscalls_untimed = 1;
    r.stats.impossible_holds = 2;
    r.stats.owner_stacks_unsampled = 3;
    r.cpu_lock_share = 12.5;
    r.syscalls.push_back(latencyRow());
    r.functions.push_back(latencyRow());
    r.workload.exit_status = 1;
    r.workload.signal = 9;
    r.workload.results = {{"lockscope_result", {{"ops_per_sec", 1e6}, {"runs", json::array({1, 2.5})}}}};
    r.warnings.push_back("a \"quoted\" warning");
    return r;
}

MetricDelta everyMetricMember(double before, double after)
{
    MetricDelta m;
    m.name = "cpu_lock_share";
    m.unit = "%";
    m.value = {before, after};
    m.before_runs = RunSummary::of({1.0, 2.0, 4.0});
    m.after_runs = RunSummary::of({after, after});
    m.runs_test = RunTest{.t = std::nan(""), .df = 2.5, .p_value = 0.04, .ranges_separate = true};
    m.tail_basis = TailBasis { .timed = 3, .waits = 300, .exact = false, .verdict = true };
    m.judgement.p_value = 0.04;
    m.judgement.reason = "why";
    return m;
}

Comparison everyComparisonMember()
{
    Capture before = withAcquires();
    Capture after = before;
    after.locks.front().sites.front().acquire.add(96000, 20);
    after.locks.front().acquire = after.locks.front().sites.front().acquire;
    Comparison c = compare(before, after);
    EXPECT_TRUE(c.locks.at(0).has_acquire) << "the lock with slow acquisitions";
    for (const double d : kAwkward)
        c.headline.push_back(everyMetricMember(d, 0.5));
    c.locks.at(0).runs.push_back(everyMetricMember(0.0, 1.0)); // pct of 0 is null
    LatencyDelta l;
    l.name = "semtimedop";
    l.before.add(1000, 3);
    l.avg_runs = everyMetricMember(1.0, 2.0);
    c.syscalls.push_back(l);
    c.functions.push_back(l);
    c.per_op = true;
    c.ops_per_s = {1e6, 1.25e6};
    return c;
}

} // namespace

TEST(JsonText, ReportWithEveryMemberIsTheDomsLayout)
{
    const std::string out = render(everyReportMember(), Format::Json, scalingExtras());
    expectTheDomsLayout(out);
    const json j = json::parse(out);
    for (const char* key : {"acquire", "cgroup", "holders", "name", "p50_acquire_ns", "p99_acquire_ns",
                            "tail_basis", "walked_holds", "walked_waits"})
        EXPECT_TRUE(j["locks"][0].contains(key)) << key;
    EXPECT_EQ(j["locks"][0]["holders"][1]["owner_tid"], 42);
    EXPECT_TRUE(j["meta"]["virtualization"].contains("host_load"));
    EXPECT_EQ(j["stats"]["owner_stacks_unsampled"], 3);
    EXPECT_EQ(j["cgroups"].size(), 1u);
    EXPECT_TRUE(j["scaling"][0]["series"][12]["points"][0][1].is_null()) << "NaN is null";
}

TEST(JsonText, ComparisonWithEveryMemberIsTheDomsLayout)
{
    const std::string out = render(everyComparisonMember(), Format::Json, scalingExtras());
    expectTheDomsLayout(out);
    const json j = json::parse(out);
    for (const char* key : {"acquire_after", "acquire_before", "acquire_count", "has_acquire", "p99_acquire_ns",
                            "total_acquire_ns"})
        EXPECT_TRUE(j["locks"][0].contains(key)) << key;
    const json& runs = j["locks"][0]["runs"].back();
    EXPECT_TRUE(runs["value"]["pct"].is_null());
    EXPECT_EQ(runs["value"]["pp"], 1.0);
    EXPECT_TRUE(runs["runs_test"]["t"].is_null());
    EXPECT_FALSE(runs["tail_basis"]["exact"]);
    EXPECT_EQ(j["syscalls"].back()["avg_runs"]["runs_test"]["df"], 2.5);
    EXPECT_EQ(j["per_op"]["ops_per_s"]["after"], 1.25e6);
}

// The numbers as nlohmann's serializer writes them, whatever their form.
TEST(JsonText, NumbersAreNlohmannsOwn)
{
    for (const double d : kAwkward) {
        std::string out;
        detail::JsonText(out).value(d);
        EXPECT_EQ(out, json(d).dump()) << d;
    }
    for (const int64_t n : {int64_t{0}, int64_t{-1}, std::numeric_limits<int64_t>::min()}) {
        std::string out;
        detail::JsonText(out).value(n);
        EXPECT_EQ(out, json(n).dump());
    }
    std::string out;
    detail::JsonText(out).value(std::numeric_limits<uint64_t>::max());
    EXPECT_EQ(out, json(std::numeric_limits<uint64_t>::max()).dump());
}

TEST(JsonText, EmptyContainersAndNestingAreTheDomsLayout)
{
    std::string out;
    detail::JsonText o(out);
    o.object().key("a").array().end().key("b").object().end().key("c").array().array().value(1).end().end();
    o.key("d").value(std::vector<std::string>{"x\n", "\xff"}).end();
    EXPECT_EQ(out, test::jsonLayout(json::parse(out)));
    EXPECT_EQ(out, "{\n  \"a\": [],\n  \"b\": {},\n  \"c\": [\n    [1]\n  ],\n  \"d\": [\"x\\n\", \"\xEF\xBF\xBD\"]\n}");
}

// Scalars written on one line before a container turns up are put back one
// to a line: text that looks like the ", " between them is not split.
TEST(JsonText, ScalarsAreOneLineUntilAContainerTurnsUp)
{
    std::string out;
    detail::JsonText o(out);
    o.object().member("a, \"b\": 2", "x, y").member("b", 1.5).key("c").array().value("[1, 2]").value(-3).end();
    o.key("d").object().member("e", nullptr).end().end();
    EXPECT_EQ(out, "{\n"
                   "  \"a, \\\"b\\\": 2\": \"x, y\",\n"
                   "  \"b\": 1.5,\n"
                   "  \"c\": [\"[1, 2]\", -3],\n"
                   "  \"d\": {\"e\": null}\n"
                   "}");
    std::string flat;
    detail::JsonText(flat).value(json::parse(R"({"r": {"ops": 1, "runs": [1, 2.5]}, "s": "t"})"));
    EXPECT_EQ(flat, "{\n  \"r\": {\n    \"ops\": 1,\n    \"runs\": [1, 2.5]\n  },\n  \"s\": \"t\"\n}");
}

// Out of nlohmann's order the text would differ from what the tests
// checked: refused in release builds too, not just asserted.
TEST(JsonText, MembersOutOfOrderAreRefused)
{
    std::string out;
    detail::JsonText o(out);
    o.object().key("b").value(1);
    EXPECT_THROW(o.key("a"), std::logic_error);
    EXPECT_THROW(o.key("b"), std::logic_error) << "a key twice";
    std::string bad;
    EXPECT_THROW(detail::JsonText(bad).end(), std::logic_error);
}
