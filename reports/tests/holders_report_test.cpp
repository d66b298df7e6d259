// SPDX-License-Identifier: GPL-2.0-or-later
// "held by": a capture recorded with --holder-stacks names, per lock, the
// stacks that held it while others waited, with their share of the wait.
#include <gtest/gtest.h>

#include "../src/format_util.h"
#include "lockscope/capture/io.h"
#include "lockscope/reports/render.h"
#include "lockscope/reports/report.h"
#include "test_support.h"

using namespace lockscope;
using namespace lockscope::reports;

namespace {

// The baseline fixture's semaphore lock, held by two sem_lock paths: the
// semtimedop one (stack 12) for 60% of the lock's wait, the semctl one
// (stack 13) for 15%, seen from two waiter sites (so rows must sum sites).
Capture withHolders()
{
    Capture c = readCapture(test::fixture("baseline.lockscope.json"));
    Lock& l = c.locks.at(0);
    EXPECT_EQ(l.key, "spinlock@sem_lock");
    const uint64_t total = l.wait.total();
    l.sites.at(0).holders = { Holder { 12, 300, total / 2 }, Holder { 13, 20, total * 15 / 100 } };
    l.sites.at(1).holders = { Holder { 12, 100, total / 10 } };
    return c;
}

// The same lock as if recorded with --lock-owner: two owner tasks, one seen
// at two stacks; the wait charged to them is 70% of the lock's.
Capture withOwners()
{
    Capture c = readCapture(test::fixture("baseline.lockscope.json"));
    Lock& l = c.locks.at(0);
    const uint64_t total = l.wait.total();
    l.sites.at(0).holders = { Holder { 12, 30, total / 2, 4242, "ls-owner" }, Holder { 13, 2, total / 20, 4242, "ls-owner" } };
    l.sites.at(1).holders = { Holder { 12, 10, total * 15 / 100, 777, "kworker/1:2" } };
    return c;
}

size_t count(const std::string& text, const std::string& needle)
{
    size_t n = 0;
    for (size_t at = text.find(needle); at != std::string::npos; at = text.find(needle, at + 1))
        ++n;
    return n;
}

TEST(HolderReport, RowsSumSitesAndShareTheLocksWait)
{
    const Report r = buildReport(withHolders(), {});
    const LockRow& l = r.locks.at(0);
    ASSERT_EQ(l.holders.size(), 2u);
    EXPECT_EQ(l.holders[0].count, 400u);
    EXPECT_NEAR(l.holders[0].wait_share, 0.60, 1e-6);
    EXPECT_NEAR(l.holders[1].wait_share, 0.15, 1e-6);
    EXPECT_EQ(l.holders[0].frames.back().rfind("queued_spin_lock_slowpath", 0), 0u) << "outermost first";
    for (size_t i = 1; i < r.locks.size(); ++i)
        EXPECT_TRUE(r.locks[i].holders.empty()) << r.locks[i].key;
}

TEST(HolderReport, TextMarkdownHtmlAndJsonShowHeldBy)
{
    const Report r = buildReport(withHolders(), {});
    const std::string text = render(r, Format::Text);
    EXPECT_EQ(count(text, "held by"), 1u) << text;
    const size_t at = text.find("held by");
    const std::string section = text.substr(at, text.find("\n\n", at) - at);
    EXPECT_NE(section.find("60.00%"), std::string::npos) << section;
    EXPECT_NE(section.find("15.00%"), std::string::npos) << section;
    EXPECT_NE(section.find("do_semtimedop"), std::string::npos) << section;
    EXPECT_NE(section.find("semctl_main"), std::string::npos) << section;

    const std::string md = render(r, Format::Markdown);
    EXPECT_NE(md.find("held by"), std::string::npos);
    EXPECT_NE(md.find("60.00%"), std::string::npos);
    const std::string html = render(r, Format::Html);
    EXPECT_NE(html.find("Held by"), std::string::npos);
    EXPECT_NE(html.find("semctl_main"), std::string::npos);
    const auto json = nlohmann::json::parse(render(r, Format::Json));
    ASSERT_TRUE(json["locks"][0].contains("holders"));
    EXPECT_EQ(json["locks"][0]["holders"][0]["count"], 400);
}

TEST(HolderReport, OwnersAreRowsPerTaskAndStack)
{
    const Report r = buildReport(withOwners(), {});
    const auto& h = r.locks.at(0).holders;
    ASSERT_EQ(h.size(), 3u) << "one row per (owner, stack)";
    EXPECT_EQ(h[0].owner, "ls-owner/4242");
    EXPECT_EQ(h[0].count, 30u);
    EXPECT_NEAR(h[0].wait_share, 0.50, 1e-6);
    EXPECT_EQ(h[1].owner, "kworker/1:2/777");
    EXPECT_NEAR(h[1].wait_share, 0.15, 1e-6);
    EXPECT_EQ(h[2].owner_tid, 4242u);
    EXPECT_EQ(h[2].owner_comm, "ls-owner");
}

TEST(HolderReport, EveryFormatNamesTheOwnerWhereItWasAndTheWaitChargedToIt)
{
    const Report r = buildReport(withOwners(), {});
    const LockRow& l = r.locks.at(0);
    const std::string wait = fmt::duration(double(l.holders[0].wait_ns));
    const std::string text = render(r, Format::Text);
    const size_t at = text.find("held by (owner task");
    ASSERT_NE(at, std::string::npos) << text;
    const std::string section = text.substr(at, text.find("\n\n", at) - at);
    EXPECT_NE(section.find("50.00%       30" + fmt::padLeft(wait, 12) + "  ls-owner/4242 at "), std::string::npos)
        << section;
    EXPECT_NE(section.find("kworker/1:2/777 at "), std::string::npos) << section;
    EXPECT_NE(section.find("semctl_main"), std::string::npos) << "the owner's other stack: " << section;

    const std::string md = render(r, Format::Markdown);
    EXPECT_NE(md.find("ls-owner/4242 at "), std::string::npos) << md;
    EXPECT_NE(md.find("held by (owner task"), std::string::npos);

    const std::string html = render(r, Format::Html);
    EXPECT_NE(html.find("<th>owner</th>"), std::string::npos) << "the owner has its own column";
    EXPECT_NE(html.find(wait + "</td><td class=\"l\" style=\"white-space:nowrap\"><code>ls-owner/4242</code></td>"
                              "<td class=\"l\"><code>"),
              std::string::npos)
        << html;

    const auto json = nlohmann::json::parse(render(r, Format::Json));
    const auto& jh = json["locks"][0]["holders"];
    ASSERT_EQ(jh.size(), 3u);
    EXPECT_EQ(jh[0]["owner_tid"], 4242);
    EXPECT_EQ(jh[0]["owner_comm"], "ls-owner");
    EXPECT_EQ(jh[0]["wait_ns"], l.holders[0].wait_ns);
    EXPECT_EQ(jh[0]["count"], 30);
    EXPECT_EQ(jh[0]["frames"], nlohmann::json(l.holders[0].frames));
    EXPECT_FALSE(nlohmann::json::parse(render(buildReport(withHolders(), {}), Format::Json))["locks"][0]["holders"][0]
                     .contains("owner_tid"))
        << "spinlock holders have no owner task";
}

TEST(HolderReport, CapturesWithoutHoldersSayNothingAboutThem)
{
    const Report r = buildReport(readCapture(test::fixture("baseline.lockscope.json")), {});
    for (Format f : { Format::Text, Format::Markdown, Format::Html })
        EXPECT_EQ(render(r, f).find("eld by"), std::string::npos);
    EXPECT_FALSE(nlohmann::json::parse(render(r, Format::Json))["locks"][0].contains("holders"));
}

} // namespace
