// SPDX-License-Identifier: GPL-2.0-or-later
#include <gtest/gtest.h>

#include <filesystem>

#include "lockscope/capture/io.h"
#include "lockscope/reports/compare.h"
#include "lockscope/reports/render.h"
#include "test_support.h"

// The HTML pages in a real browser: headless Chromium loads them from disk,
// with networking disabled, must log no console error, must run the inline
// script (data-ready="1" in the dumped DOM), and leaves a screenshot in the
// build directory (reports/tests/artifacts/*.png).
using namespace lockscope;
using namespace lockscope::reports;

namespace {
std::string chromium()
{
    for (const char* p : {"/usr/bin/chromium", "/usr/bin/chromium-browser", "/usr/bin/google-chrome"})
        if (std::filesystem::exists(p))
            return p;
    return "";
}

void checkInBrowser(const std::string& html, const std::string& name)
{
    const std::string browser = chromium();
    if (browser.empty())
        GTEST_SKIP() << "no Chromium found (Debian package: chromium)";
    EXPECT_EQ(html.find("http://"), html.find("http://www.w3.org/2000/svg")) << "only the SVG namespace URI";
    EXPECT_EQ(html.find("https://"), std::string::npos) << "the page must not reference the network";
    EXPECT_EQ(html.find("<script src"), std::string::npos);
    const std::string dir = test::artifactDir();
    const std::string page = dir + "/" + name + ".html";
    test::writeFile(page, html);
    const std::string flags = " --headless --no-sandbox --disable-gpu --disable-background-networking "
                              "--disable-component-update --disable-sync --no-first-run --hide-scrollbars ";
    auto profile = [&](const char* tag) {
        const std::string d = dir + "/chromium-profile-" + name + "-" + tag;
        std::filesystem::remove_all(d);
        return " --user-data-dir='" + d + "' ";
    };
    std::string log;
    const int rc = test::run("timeout 120 " + browser + flags + profile("shot") +
                                 "--enable-logging=stderr --v=0 --window-size=1280,2000 --screenshot='" + dir + "/" +
                                 name + ".png' 'file://" + page + "'",
                             &log);
    ASSERT_EQ(rc, 0) << log.substr(0, 2000);
    EXPECT_TRUE(std::filesystem::exists(dir + "/" + name + ".png"));
    EXPECT_GT(std::filesystem::file_size(dir + "/" + name + ".png"), 10000u);
    EXPECT_EQ(log.find("Uncaught"), std::string::npos) << log.substr(0, 2000);
    EXPECT_EQ(log.find(":CONSOLE("), std::string::npos) << "console output: " << log.substr(0, 2000);
    std::string dom;
    ASSERT_EQ(test::run("timeout 120 " + browser + flags + profile("dom") + "--dump-dom 'file://" + page +
                            "' 2>/dev/null",
                        &dom),
              0);
    EXPECT_NE(dom.find("data-ready=\"1\""), std::string::npos) << "the inline script did not run";
}
} // namespace

TEST(HtmlInChromium, ComparisonPage)
{
    const Capture b = readCapture(test::fixture("baseline.lockscope.json"));
    const Capture a = readCapture(test::fixture("patched.lockscope.json"));
    const std::string html = render(compare(b, a), Format::Html);
    EXPECT_NE(html.find("class=\"flame\""), std::string::npos) << "differential flame graph";
    EXPECT_NE(html.find("class=\"norm\""), std::string::npos) << "normalized histogram overlay";
    EXPECT_NE(html.find("id=\"normalize\""), std::string::npos) << "normalize toggle";
    EXPECT_NE(html.find("class=\"sides\""), std::string::npos) << "metadata side by side";
    checkInBrowser(html, "compare");
}

TEST(HtmlInChromium, ReportPage)
{
    const Capture b = readCapture(test::fixture("baseline.lockscope.json"));
    checkInBrowser(render(buildReport(b), Format::Html), "report");
}

// The owners capture: the "Held by" tables with their owner column.
TEST(HtmlInChromium, OwnersReportPage)
{
    const Capture c = readCapture(test::fixture("owners.lockscope.json"));
    const std::string html = render(buildReport(c), Format::Html);
    EXPECT_NE(html.find("<th>owner</th>"), std::string::npos);
    checkInBrowser(html, "report-owners");
}
