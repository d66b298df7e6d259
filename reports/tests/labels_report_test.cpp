// SPDX-License-Identifier: GPL-2.0-or-later
// A lock's name (record --lock-names) beside its key, and the per-cgroup
// summary (record --per-cgroup), in every report format.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "lockscope/capture/io.h"
#include "lockscope/reports/render.h"
#include "lockscope/reports/report.h"
#include "test_support.h"

using namespace lockscope;
using namespace lockscope::reports;

namespace {

// The baseline fixture's locks split between two cgroups, the top one named.
Capture labelled()
{
    Capture c = readCapture(test::fixture("baseline.lockscope.json"));
    EXPECT_GE(c.locks.size(), 2u);
    for (size_t i = 0; i < c.locks.size(); ++i) {
        c.locks[i].cgroup = i == 0 ? "/ls/a" : "/ls/b";
        c.locks[i].key += "#" + c.locks[i].cgroup;
    }
    c.locks[0].name = "&kmalloc-cg-1k";
    return c;
}

TEST(LabelsReport, CgroupRowsSumTheirLocks)
{
    const Capture c = labelled();
    const Report r = buildReport(c, {});
    ASSERT_EQ(r.cgroups.size(), 2u);
    uint64_t waitB = 0, countB = 0, holdB = 0, holdsB = 0;
    for (size_t i = 1; i < c.locks.size(); ++i) {
        waitB += c.locks[i].wait.total();
        countB += c.locks[i].wait.count();
        holdB += c.locks[i].hold.total();
        holdsB += c.locks[i].hold.count();
    }
    const CgroupRow& a = r.cgroups[0].cgroup == "/ls/a" ? r.cgroups[0] : r.cgroups[1];
    const CgroupRow& b = r.cgroups[0].cgroup == "/ls/a" ? r.cgroups[1] : r.cgroups[0];
    EXPECT_EQ(a.locks, 1u);
    EXPECT_EQ(a.wait_ns, c.locks[0].wait.total());
    EXPECT_EQ(b.locks, c.locks.size() - 1);
    EXPECT_EQ(b.wait_ns, waitB);
    EXPECT_EQ(b.contentions, countB);
    EXPECT_EQ(a.holds, c.locks[0].hold.count());
    EXPECT_EQ(a.hold_ns, c.locks[0].hold.total());
    EXPECT_EQ(b.holds, holdsB);
    EXPECT_EQ(b.hold_ns, holdB);
    EXPECT_GT(a.holds + b.holds, 0u) << "the fixture has holds: the sums above are not all zero";
    EXPECT_NEAR(a.wait_share + b.wait_share, 1.0, 1e-9);
    EXPECT_GE(r.cgroups[0].wait_ns, r.cgroups[1].wait_ns) << "by wait, descending";
    EXPECT_TRUE(buildReport(readCapture(test::fixture("baseline.lockscope.json")), {}).cgroups.empty());
}

TEST(LabelsReport, EveryFormatShowsTheNameAndTheCgroups)
{
    const Report r = buildReport(labelled(), {});
    for (Format f : { Format::Text, Format::Markdown, Format::Html }) {
        const std::string out = render(r, f);
        EXPECT_NE(out.find(f == Format::Html ? "&amp;kmalloc-cg-1k" : "&kmalloc-cg-1k"), std::string::npos)
            << "format " << int(f);
        EXPECT_NE(out.find("/ls/b"), std::string::npos) << "format " << int(f);
    }
    const nlohmann::json j = nlohmann::json::parse(render(r, Format::Json));
    EXPECT_EQ(j["locks"][0]["name"], "&kmalloc-cg-1k");
    EXPECT_EQ(j["locks"][0]["cgroup"], "/ls/a");
    ASSERT_EQ(j["cgroups"].size(), 2u);
    EXPECT_TRUE(j["cgroups"][0].contains("hold_ns"));
    EXPECT_FALSE(j["locks"][1].contains("name"));
}

// A global lock is keyed by its symbol: where the name is the key, the
// human formats show it once; the JSON report keeps the field.
TEST(LabelsReport, ANameThatIsTheKeyIsNotRepeated)
{
    Capture c = readCapture(test::fixture("baseline.lockscope.json"));
    c.locks[0].key = "rtnl_mutex";
    c.locks[0].name = "rtnl_mutex";
    c.locks[1].key = "rtnl_mutex+0x8";
    c.locks[1].name = "rtnl_mutex";
    const Report r = buildReport(c, {});
    const std::string md = render(r, Format::Markdown), text = render(r, Format::Text), html = render(r, Format::Html);
    EXPECT_EQ(md.find("`rtnl_mutex` `rtnl_mutex`"), std::string::npos) << md;
    EXPECT_NE(md.find("| `rtnl_mutex+0x8` `rtnl_mutex` |"), std::string::npos) << md;
    EXPECT_EQ(text.find("rtnl_mutex [rtnl_mutex]"), std::string::npos) << text;
    EXPECT_NE(text.find("rtnl_mutex+0x8 [rtnl_mutex]"), std::string::npos) << text;
    EXPECT_EQ(text.find("=== rtnl_mutex (" + c.locks[0].type + "), name"), std::string::npos) << text;
    EXPECT_EQ(html.find("<code>rtnl_mutex</code> <span class=\"muted\">rtnl_mutex</span>"), std::string::npos);
    EXPECT_NE(html.find("<code>rtnl_mutex+0x8</code> <span class=\"muted\">rtnl_mutex</span>"), std::string::npos);
    const auto j = nlohmann::json::parse(render(r, Format::Json));
    EXPECT_EQ(j["locks"][0]["name"], "rtnl_mutex");
}

TEST(LabelsReport, LockOptionMatchesANameToo)
{
    ReportOptions o;
    o.lock_key = "&kmalloc-cg-1k";
    const Report r = buildReport(labelled(), o);
    ASSERT_EQ(r.locks.size(), 1u);
    EXPECT_EQ(r.locks[0].name, "&kmalloc-cg-1k");
}

} // namespace
