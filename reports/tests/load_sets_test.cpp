// SPDX-License-Identifier: GPL-2.0-or-later
#include <gtest/gtest.h>

#include "lockscope/capture/io.h"
#include "lockscope/reports/input.h"
#include "test_support.h"

// Run sets load on every CPU; what comes back and what fails must read as if
// the files had been read one by one in argument order.
namespace {
using lockscope::Capture;
using lockscope::CaptureError;
using lockscope::reports::loadSets;
using lockscope::reports::test::artifactDir;
using lockscope::reports::test::fixture;
using lockscope::reports::test::writeFile;

std::vector<std::string> labelled(const std::string& prefix, int n)
{
    Capture c = lockscope::readCapture(fixture("baseline.lockscope.json"));
    std::vector<std::string> paths;
    for (int i = 0; i < n; ++i) {
        c.meta.label = prefix + std::to_string(i);
        paths.push_back(artifactDir() + "/" + c.meta.label + ".lockscope.json");
        lockscope::writeCapture(c, paths.back());
    }
    return paths;
}
} // namespace

TEST(LoadSets, ManyFilesComeBackInArgumentOrder)
{
    const auto before = labelled("before-", 7), after = labelled("after-", 9);
    const auto [b, a] = loadSets(before, after);
    ASSERT_EQ(b.size(), 7u);
    ASSERT_EQ(a.size(), 9u);
    for (size_t i = 0; i < b.size(); ++i)
        EXPECT_EQ(b[i].meta.label, "before-" + std::to_string(i));
    for (size_t i = 0; i < a.size(); ++i)
        EXPECT_EQ(a[i].meta.label, "after-" + std::to_string(i));
}

TEST(LoadSets, TheFirstBadFileInArgumentOrderIsNamed)
{
    auto files = labelled("mixed-", 6);
    const std::string empty = artifactDir() + "/first-bad-empty.lockscope.json";
    writeFile(empty, "");
    files.insert(files.begin() + 4, fixture("malformed/dangling-stack-id.lockscope.json"));
    files.insert(files.begin() + 2, empty);
    try {
        (void)loadSets({files.begin(), files.begin() + 3}, {files.begin() + 3, files.end()});
        FAIL() << "two bad files loaded";
    } catch (const CaptureError& e) {
        EXPECT_NE(std::string(e.what()).find("first-bad-empty.lockscope.json: the file is empty"), std::string::npos)
            << e.what();
    }
}
