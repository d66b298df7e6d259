// SPDX-License-Identifier: GPL-2.0-or-later
// render() with a sink: JSON comes in pieces as it is made (so a JSON
// comparison of big captures never exists whole), the other formats whole;
// either way the pieces are the string render() returns.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "lockscope/reports/render.h"
#include "test_support.h"

using namespace lockscope;
using namespace lockscope::reports;

namespace {

// 4000 6-frame stacks, three frames of each their own: a differential tree of
// 12k nodes, several MiB of JSON.
Capture wideCapture(uint64_t waitNs)
{
    Capture c;
    c.meta.cpu_count = 2;
    c.meta.duration_s = 1;
    Lock lock = test::makeLock("spinlock@wide", 1, 10, waitNs);
    lock.sites.clear();
    for (uint32_t id = 1; id <= 4000; ++id) {
        const std::string n = std::to_string(id), leaf = "leaf_" + n, mid = "mid_" + n, outer = "outer_" + n;
        c.stacks.push_back(test::makeStack(id, {leaf.c_str(), mid.c_str(), outer.c_str(), "d", "e", "entry"}));
        LockSite site;
        site.stack_id = id;
        site.wait.add(waitNs + id);
        lock.wait.merge(site.wait);
        lock.sites.push_back(site);
    }
    c.locks.push_back(lock);
    return c;
}

std::vector<std::string> pieces(const Comparison& c, Format f)
{
    std::vector<std::string> out;
    render(c, f, {}, [&](std::string_view piece) { out.emplace_back(piece); });
    return out;
}

std::string joined(const std::vector<std::string>& v)
{
    std::string s;
    for (const auto& p : v)
        s += p;
    return s;
}

} // namespace

TEST(RenderPieces, BigJsonComesInPiecesThatAddUpToTheDocument)
{
    const Comparison c = compare(wideCapture(1000), wideCapture(3000));
    ASSERT_GT(c.tree.nodes.size(), 12000u);
    const auto json = pieces(c, Format::Json);
    EXPECT_GT(json.size(), 2u) << "a document of several MiB handed over at once";
    for (size_t i = 0; i + 1 < json.size(); ++i)
        EXPECT_LT(json[i].size(), size_t{2} << 20) << "piece " << i;
    EXPECT_EQ(joined(json), render(c, Format::Json));
    for (const Format f : {Format::Text, Format::Markdown, Format::Html}) {
        const auto whole = pieces(c, f);
        ASSERT_EQ(whole.size(), 1u) << toString(f);
        EXPECT_EQ(whole[0], render(c, f)) << toString(f);
    }
}

TEST(RenderPieces, ReportsGoThroughTheSinkToo)
{
    const Report r = buildReport(wideCapture(1000));
    std::vector<std::string> out;
    render(r, Format::Json, {}, [&](std::string_view piece) { out.emplace_back(piece); });
    EXPECT_EQ(joined(out), render(r, Format::Json));
    ASSERT_FALSE(out.empty());
    EXPECT_EQ(out.back().back(), '\n');
}

// The HTML comparison details the ten most changed locks; the others are
// rows of its table (it once detailed all but the eleventh: 10k sections,
// 160 MB, for the 100k-stack pair).
TEST(RenderPieces, HtmlDetailsTheTopTenLocksOnly)
{
    Capture before, after;
    for (Capture* c : {&before, &after}) {
        c->meta.cpu_count = 2;
        c->meta.duration_s = 1;
        c->stacks.push_back(test::makeStack(1, {"caller", "entry"}));
    }
    for (int i = 0; i < 25; ++i) {
        const std::string key = "spinlock@lock_" + std::to_string(i);
        before.locks.push_back(test::makeLock(key, 1, 200, 1000, uint64_t(i) + 1));
        after.locks.push_back(test::makeLock(key, 1, 200, 20000, uint64_t(i) + 100));
    }
    const std::string html = render(compare(before, after), Format::Html);
    size_t details = 0;
    for (size_t at = html.find("<div class=\"lock\">"); at != std::string::npos;
         at = html.find("<div class=\"lock\">", at + 1))
        ++details;
    EXPECT_EQ(details, 10u);
    for (int i = 0; i < 25; ++i)
        EXPECT_NE(html.find("<code>spinlock@lock_" + std::to_string(i) + "</code>"), std::string::npos) << i;
}
