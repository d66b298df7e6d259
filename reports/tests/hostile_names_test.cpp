// SPDX-License-Identifier: GPL-2.0-or-later
// Lock and frame names come from the kernel, from user programs' symbols and
// from imported files: every format must print them as text, never as its
// own syntax (a table cell, a fence, a frame separator, a tag, a terminal
// escape sequence).
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <algorithm>
#include <regex>
#include <set>
#include <sstream>

#include "../src/format_util.h"
#include "lockscope/capture/io.h"
#include "lockscope/reports/exchange.h"
#include "lockscope/reports/render.h"
#include "test_support.h"

using namespace lockscope;
using namespace lockscope::reports;

namespace {

const std::string kKey = "spin|lock`x`\n# heading\x1b[31m<script>alert(1)</script>";
const std::string kFrame = "a;b";
const std::string kFence = "f```\n```evil\x1b]0;title\x07";
const std::string kType = "spin|lock\x1b[2J";
// A task names itself (prctl PR_SET_NAME): the owner's comm is as hostile as any frame.
const std::string kOwner = "ow|n`er\n# x\x1b[31m<script>own</script>";

Capture hostileCapture(uint64_t waitNs)
{
    Capture c;
    c.meta.label = "label|`x`\n- item\x1b[1m";
    c.meta.kernel_release = "6.1`|`";
    c.meta.cpu_count = 2;
    c.meta.cpu_model = "cpu<b>|";
    c.meta.duration_s = 1;
    c.stacks.push_back(test::makeStack(1, {"a", "b"}));
    c.stacks.push_back(test::makeStack(2, {kFrame.c_str(), kFence.c_str(), "<img src=x onerror=alert(1)>"}));
    Lock l = test::makeLock(kKey, 1, 50, waitNs);
    l.type = kType;
    l.name = kFence; // record --lock-names: a slab cache's name comes from the kernel too
    l.cgroup = kType; // record --per-cgroup: cgroup directories are named by whoever makes them
    LockSite s2;
    s2.stack_id = 2;
    for (int i = 0; i < 40; ++i)
        s2.wait.add(waitNs * 2);
    l.wait.merge(s2.wait);
    s2.holders = {Holder{2, 3, waitNs, 99, kOwner}};
    l.sites.push_back(s2);
    c.locks.push_back(l);
    return c;
}

bool hasControl(const std::string& s, bool newlineOk)
{
    for (char c : s)
        if (const auto ch = static_cast<unsigned char>(c); (ch < 0x20 && !(newlineOk && ch == 0x0a)) || ch == 0x7f)
            return true;
    return false;
}

// '|' not preceded by an odd run of backslashes.
size_t cellSeparators(const std::string& line)
{
    size_t n = 0, slashes = 0;
    for (char c : line) {
        if (c == '|' && slashes % 2 == 0)
            ++n;
        slashes = c == '\\' ? slashes + 1 : 0;
    }
    return n;
}

// Every row of every GFM table has as many cell separators as its header.
void expectTablesIntact(const std::string& md)
{
    std::istringstream in(md);
    size_t header = 0;
    for (std::string line; std::getline(in, line);) {
        if (line.empty() || line[0] != '|') {
            header = 0;
            continue;
        }
        if (!header)
            header = cellSeparators(line);
        else
            EXPECT_EQ(cellSeparators(line), header) << line;
    }
}

// Code fences open and close in pairs of the same length, so no name closes one.
void expectFencesIntact(const std::string& md)
{
    std::istringstream in(md);
    std::string open;
    for (std::string line; std::getline(in, line);) {
        if (line.rfind("```", 0) != 0)
            continue;
        if (open.empty())
            open = line;
        else {
            EXPECT_EQ(line, open) << "a fence closed by a different one";
            open.clear();
        }
    }
    EXPECT_TRUE(open.empty()) << "unclosed fence " << open;
}

// Whether the line starting at bol is inside a fenced code block.
bool insideFence(const std::string& md, size_t bol)
{
    bool inside = false;
    for (size_t at = 0; at < bol; at = md.find('\n', at) + 1) {
        if (md.compare(at, 3, "```") == 0)
            inside = !inside;
        if (md.find('\n', at) == std::string::npos)
            break;
    }
    return inside;
}

} // namespace

TEST(HostileNames, EscapersDoWhatTheySay)
{
    EXPECT_EQ(fmt::printable("a\nb\x1b[0m\\\x7f"), "a\\nb\\e[0m\\\\\\x7f");
    EXPECT_EQ(fmt::printable("\xc2\x9b" "1m"), "\\u009b1m") << "C1 CSI";
    EXPECT_EQ(fmt::printable("\x9b" "1m"), "\\x9b1m") << "a lone byte that is not UTF-8";
    EXPECT_EQ(fmt::printable("caf\xc3\xa9 \xe2\x86\x90"), "caf\xc3\xa9 \xe2\x86\x90") << "UTF-8 kept";
    EXPECT_EQ(fmt::printable("\xe0\x80\xaf"), "\\xe0\\x80\\xaf") << "overlong";
    EXPECT_EQ(fmt::terminalText("a\nb\x1b"), "a\nb\\e");
    EXPECT_EQ(fmt::mdEscape("# a|b"), "\\# a\\|b");
    EXPECT_EQ(fmt::mdEscape("12. x"), "12\\. x");
    EXPECT_EQ(fmt::mdEscape("-x"), "\\-x");
    EXPECT_EQ(fmt::mdCode("a`b|c"), "``a`b\\|c``");
    EXPECT_EQ(fmt::mdCode("`a"), "`` `a ``");
    EXPECT_EQ(fmt::mdFence("x````y"), "`````");
    EXPECT_EQ(fmt::mdFence("plain"), "```");
    EXPECT_EQ(fmt::foldedFrame("a;b\nc"), "a:b\\nc");
}

TEST(HostileNames, TextHasNoControlCharactersAndOneLinePerRow)
{
    const Capture c = hostileCapture(1000);
    const std::string report = render(buildReport(c), Format::Text);
    EXPECT_FALSE(hasControl(report, true));
    EXPECT_NE(report.find(fmt::printable(kKey)), std::string::npos) << report;
    EXPECT_EQ(report.find("alert(1)</script>\n"), std::string::npos);
    const std::string cmp = render(compare(c, hostileCapture(3000)), Format::Text);
    EXPECT_FALSE(hasControl(cmp, true)) << cmp;
    // The key's newline must not start a line of its own in any row or heading.
    EXPECT_EQ(cmp.find("\n# heading"), std::string::npos) << cmp;
}

TEST(HostileNames, MarkdownKeepsTablesAndFences)
{
    const Capture c = hostileCapture(1000);
    for (const std::string& md :
         {render(buildReport(c), Format::Markdown), render(compare(c, hostileCapture(3000)), Format::Markdown)}) {
        EXPECT_FALSE(hasControl(md, true)) << md;
        expectTablesIntact(md);
        expectFencesIntact(md);
        // Raw only inside the key's code span or a fenced code block (the
        // owner's comm in "held by"), where Markdown shows HTML as text.
        for (size_t at = md.find("<script>"); at != std::string::npos; at = md.find("<script>", at + 1)) {
            const size_t bol = md.rfind('\n', at) + 1;
            if (!insideFence(md, bol)) {
                EXPECT_EQ(md.compare(bol, 9, "| ``spin\\"), 0) << md.substr(bol, at - bol);
            }
        }
        EXPECT_EQ(md.find("\n# heading"), std::string::npos) << md;
        EXPECT_EQ(md.find("\n- item"), std::string::npos) << md;
    }
}

TEST(HostileNames, HtmlEscapesEveryName)
{
    const Capture c = hostileCapture(1000);
    for (const std::string& html :
         {render(buildReport(c), Format::Html), render(compare(c, hostileCapture(3000)), Format::Html)}) {
        EXPECT_EQ(html.find("<script>alert"), std::string::npos);
        EXPECT_EQ(html.find("<img src=x"), std::string::npos);
        EXPECT_EQ(html.find("<b>|"), std::string::npos);
        EXPECT_NE(html.find("&lt;script&gt;alert(1)"), std::string::npos);
    }
    const std::string report = render(buildReport(c), Format::Html);
    EXPECT_EQ(report.find("<script>own"), std::string::npos);
    EXPECT_NE(report.find("&lt;script&gt;own&lt;/script&gt;/99"), std::string::npos) << "the owner cell";
}

TEST(HostileNames, JsonRoundTripsNamesExactly)
{
    const Capture c = hostileCapture(1000);
    const auto j = nlohmann::json::parse(render(buildReport(c), Format::Json));
    EXPECT_NE(j.dump().find(nlohmann::json(kKey).dump()), std::string::npos);
    EXPECT_EQ(j["locks"][0]["holders"][0]["owner_comm"], kOwner);
}

// The JSON renderer writes big arrays piece by piece and the call tree's
// nodes by hand (render_json.cpp): what it writes must be exactly the
// layout test::jsonLayout makes of the same document, hostile names included.
TEST(HostileNames, JsonComparisonIsTheDomsLayout)
{
    for (const Capture& c : {hostileCapture(1000), test::notUtf8Capture()}) {
        Capture after = c;
        after.stacks.at(0).frames.at(0).function = "quote\"back\\slash\x01\x7f\xc3\xa9";
        const Comparison cmp = compare(c, after);
        ASSERT_GT(cmp.tree.nodes.size(), 3u);
        const std::string out = render(cmp, Format::Json);
        const auto j = nlohmann::json::parse(out);
        EXPECT_EQ(out, test::jsonLayout(j) + "\n");
        bool seen = false;
        for (const auto& n : j["tree"])
            seen |= n["function"] == "quote\"back\\slash\x01\x7f\xc3\xa9";
        EXPECT_TRUE(seen);
    }
}

// A comm is bytes, not UTF-8: JSON shows the bad byte as U+FFFD instead of failing the report.
TEST(HostileNames, JsonReportSurvivesAnOwnerNameThatIsNotUtf8)
{
    Capture c = hostileCapture(1000);
    c.locks.at(0).sites.at(1).holders.at(0).owner_comm = "bad\xff";
    const auto j = nlohmann::json::parse(render(buildReport(c), Format::Json));
    EXPECT_EQ(j["locks"][0]["holders"][0]["owner_comm"], "bad\xef\xbf\xbd");
    EXPECT_NE(render(buildReport(c), Format::Text).find("bad\\xff/99 at "), std::string::npos);
}

// A frame "a;b" stays one frame: it must not merge with a stack "a" -> "b".
TEST(HostileNames, FoldedKeepsOneFramePerFieldAndOneStackPerLine)
{
    const Capture c = hostileCapture(1000);
    const std::string folded = findExporter("folded")->write(c, {});
    EXPECT_FALSE(hasControl(folded, true));
    std::istringstream in(folded);
    const std::regex line(R"(^[^\n]+ [0-9]+$)");
    size_t lines = 0;
    std::set<size_t> fields;
    for (std::string l; std::getline(in, l); ++lines) {
        EXPECT_TRUE(std::regex_match(l, line)) << l;
        fields.insert(size_t(std::count(l.begin(), l.end(), ';')));
    }
    EXPECT_EQ(lines, 2u) << folded;
    EXPECT_EQ(fields, (std::set<size_t>{2, 3})) << "two frames + the lock, three frames + the lock\n" << folded;
    EXPECT_NE(folded.find("a:b;"), std::string::npos) << folded;
}

// Names that are not UTF-8 (a comm, a cgroup directory, a symbol are bytes):
// every text export is still UTF-8 and a JSON one still parses. The binary
// ones (pprof) are read back in pprof_test.cpp and by go tool pprof.
TEST(HostileNames, EveryTextExportIsUtf8WhenTheNamesAreNot)
{
    EXPECT_EQ(fmt::validUtf8("a\xff" "b\xc3\xa9\xe2\x82"), "a\xef\xbf\xbd" "b\xc3\xa9\xef\xbf\xbd\xef\xbf\xbd");
    const Capture c = test::notUtf8Capture();
    size_t text = 0;
    for (const Exporter* e : exporters()) {
        if (e->binary())
            continue;
        ++text;
        for (const Weight w : {Weight::Wait, Weight::Count}) {
            std::string out;
            ASSERT_NO_THROW(out = e->write(c, {w})) << e->name();
            EXPECT_EQ(fmt::validUtf8(out), out) << e->name();
            if (std::string_view(e->extension()).ends_with(".json")) {
                EXPECT_TRUE(nlohmann::json::accept(out)) << e->name();
            }
            EXPECT_NE(out.find("caller"), std::string::npos) << e->name() << " lost the frame\n" << out;
        }
    }
    EXPECT_GE(text, 2u) << "folded and speedscope at least";
}
