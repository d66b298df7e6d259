// SPDX-License-Identifier: GPL-2.0-or-later
// Syscall latency recorded with --syscall-sample N: every format says which
// entries were sampled, and call counts are the exact totals, not the timed calls.
#include <gtest/gtest.h>

#include "lockscope/capture/io.h"
#include "lockscope/reports/compare.h"
#include "lockscope/reports/render.h"
#include "lockscope/reports/report.h"
#include "test_support.h"

using namespace lockscope;
using namespace lockscope::reports;

namespace {

Capture sampled(const Capture& base, const std::string& name, uint32_t period, uint64_t calls)
{
    Capture c = base;
    for (LatencyEntry& e : c.syscalls)
        if (e.name == name) {
            e.sample_period = period;
            e.all_calls = calls;
        }
    return c;
}

} // namespace

TEST(SampledLatency, ReportsShowThePeriodAndTheExactCalls)
{
    const Capture c = sampled(readCapture(test::fixture("baseline.lockscope.json")), "semtimedop", 16, 1'234'567);
    const Report r = buildReport(c, {});
    const LatencyRow* row = nullptr;
    for (const LatencyRow& s : r.syscalls)
        if (s.name == "semtimedop")
            row = &s;
    ASSERT_NE(row, nullptr);
    EXPECT_EQ(row->calls, 1'234'567u);
    EXPECT_EQ(row->sample_period, 16u);
    for (Format f : { Format::Text, Format::Markdown, Format::Html }) {
        const std::string out = render(r, f);
        EXPECT_NE(out.find("(1 in 16 timed)"), std::string::npos) << toString(f);
        EXPECT_NE(out.find("1234567"), std::string::npos) << toString(f);
    }
    const auto j = nlohmann::json::parse(render(r, Format::Json));
    bool seen = false;
    for (const auto& s : j.at("syscalls"))
        if (s.at("name") == "semtimedop") {
            seen = true;
            EXPECT_EQ(s.at("calls"), 1'234'567);
            EXPECT_EQ(s.at("sample_period"), 16);
        }
    EXPECT_TRUE(seen);
}

// A sampled capture against an exact one compares all calls with all calls.
TEST(SampledLatency, ComparisonUsesTotalCalls)
{
    const Capture before = readCapture(test::fixture("baseline.lockscope.json"));
    uint64_t exact = 0;
    for (const LatencyEntry& e : before.syscalls)
        if (e.name == "semtimedop")
            exact = e.latency.count();
    ASSERT_GT(exact, 0u);
    const Capture after = sampled(before, "semtimedop", 8, exact * 2);
    const Comparison cmp = compare(before, after);
    bool seen = false;
    for (const LatencyDelta& d : cmp.syscalls)
        if (d.name == "semtimedop") {
            seen = true;
            EXPECT_DOUBLE_EQ(d.calls.before, double(exact));
            EXPECT_DOUBLE_EQ(d.calls.after, double(exact * 2));
            EXPECT_EQ(d.sample_before, 1u);
            EXPECT_EQ(d.sample_after, 8u);
        }
    EXPECT_TRUE(seen);
    // Every compare format says the two sides were timed differently.
    EXPECT_NE(render(cmp, Format::Text).find("semtimedop (all -> 1 in 8 timed)"), std::string::npos);
    RenderExtras verbose; // a pasted Markdown block shows syscalls only when asked
    verbose.verbose = true;
    EXPECT_NE(render(cmp, Format::Markdown, verbose).find("`semtimedop` (all -> 1 in 8 timed)"), std::string::npos);
    EXPECT_NE(render(cmp, Format::Html).find("semtimedop (all -&gt; 1 in 8 timed)"), std::string::npos);
    const auto j = nlohmann::json::parse(render(cmp, Format::Json));
    for (const auto& s : j.at("syscalls")) {
        if (s.at("name") == "semtimedop") {
            EXPECT_EQ(s.at("sample_period"), nlohmann::json::array({1, 8}));
        }
    }
}
