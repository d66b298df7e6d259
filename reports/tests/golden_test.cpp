// SPDX-License-Identifier: GPL-2.0-or-later
#include <gtest/gtest.h>

#include "lockscope/capture/io.h"
#include "lockscope/reports/compare.h"
#include "lockscope/reports/exchange.h"
#include "lockscope/reports/render.h"
#include "test_support.h"

// Every text format on the baseline/patched fixtures, byte for byte. A
// mismatch writes <golden>.actual next to the golden file and prints a diff.
using namespace lockscope;
using namespace lockscope::reports;

namespace {
const Capture& baseline()
{
    static const Capture c = readCapture(test::fixture("baseline.lockscope.json"));
    return c;
}
const Capture& patched()
{
    static const Capture c = readCapture(test::fixture("patched.lockscope.json"));
    return c;
}
RenderExtras scaling()
{
    ScalingChart chart;
    chart.title = "sem_lock scaling";
    chart.series = {{"before", {{1, 900000}, {2, 700000}, {4, 500000}, {8, 410000}}},
                    {"after", {{1, 950000}, {2, 1300000}, {4, 1600000}, {8, 1190000}}}};
    return RenderExtras{{chart}};
}
} // namespace

class Golden : public ::testing::TestWithParam<Format> {};

TEST_P(Golden, Report)
{
    const std::string name = std::string("report.") + toString(GetParam());
    const std::string err = test::checkGolden(name, render(buildReport(baseline()), GetParam(), scaling()));
    EXPECT_TRUE(err.empty()) << err;
}

TEST_P(Golden, Compare)
{
    const std::string name = std::string("compare.") + toString(GetParam());
    const std::string err =
        test::checkGolden(name, render(compare(baseline(), patched()), GetParam(), scaling()));
    EXPECT_TRUE(err.empty()) << err;
}

// A real `record --lock-owner` capture (owner-workload: a pipe mutex and a
// memfd's i_rwsem held on purpose): the holders sections name the owners.
TEST_P(Golden, OwnersReport)
{
    static const Capture owners = readCapture(test::fixture("owners.lockscope.json"));
    const std::string name = std::string("report-owners.") + toString(GetParam());
    const std::string err = test::checkGolden(name, render(buildReport(owners), GetParam()));
    EXPECT_TRUE(err.empty()) << err;
}

INSTANTIATE_TEST_SUITE_P(Formats, Golden,
                         ::testing::Values(Format::Text, Format::Markdown, Format::Html, Format::Json),
                         [](const ::testing::TestParamInfo<Format>& p) { return std::string(toString(p.param)); });

TEST(GoldenExport, FoldedAndSpeedscope)
{
    for (const char* name : {"folded", "speedscope"})
        for (Weight w : {Weight::Wait, Weight::Hold, Weight::Count}) {
            const char* wn = w == Weight::Wait ? "wait" : w == Weight::Hold ? "hold" : "count";
            const std::string err = test::checkGolden(std::string("export.") + name + "." + wn,
                                                      findExporter(name)->write(baseline(), ExportOptions{w}));
            EXPECT_TRUE(err.empty()) << err;
        }
}

TEST(GoldenExport, CompareMarkdownIsPatchReady)
{
    const std::string md = render(compare(baseline(), patched()), Format::Markdown);
    EXPECT_NE(md.find("| ops\\_per\\_sec | 412345.60 | 1187431 | +188.0% | no verdict |"), std::string::npos) << md;
    EXPECT_NE(md.find("CPU in lock functions | 59.00% | 6.30% | -52.70 pp | no verdict (proportion z on samples"),
              std::string::npos);
    EXPECT_NE(md.find("| `spinlock@sem_lock` | total wait/s | 1.34 s/s | 11.24 ms/s | -99.2% | no verdict"),
              std::string::npos);
    EXPECT_EQ(md.find("**improved**"), std::string::npos) << "one run a side: no verdicts";
    EXPECT_EQ(md.find("CPU in `_raw_spin_lock`"), std::string::npos) << "leaf shares only with --verbose";
    RenderExtras verbose;
    verbose.verbose = true;
    EXPECT_NE(render(compare(baseline(), patched()), Format::Markdown, verbose).find("CPU in `_raw_spin_lock`"),
              std::string::npos);
}
