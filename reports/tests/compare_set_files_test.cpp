// SPDX-License-Identifier: GPL-2.0-or-later
#include <gtest/gtest.h>

#include "lockscope/capture/io.h"
#include "lockscope/reports/compare.h"
#include "lockscope/reports/input.h"
#include "lockscope/reports/render.h"
#include "sample_capture.h"
#include "test_support.h"

// compareSetFiles folds each run into its side's pool as it is read, and
// frees each side's stacks once its call tree is made; the comparison must
// be the one compareSets makes of every run held in memory.
namespace {
using namespace lockscope;
using namespace lockscope::reports;
using test::artifactDir;
using test::testdata;

using Paths = std::vector<std::string>;

// The whole comparison as the JSON renderer writes it: any figure that differs shows.
std::string inMemory(const Paths& before, const Paths& after, const CompareOptions& o = {})
{
    const auto [b, a] = loadSets(before, after);
    return render(compareSets(b, a, o), Format::Json);
}

std::string folded(const Paths& before, const Paths& after, const CompareOptions& o = {})
{
    return render(compareSetFiles(before, after, o), Format::Json);
}

Paths fixtures(const std::string& dir, std::initializer_list<const char*> names)
{
    Paths out;
    for (const char* n : names)
        out.push_back(testdata("fixtures/" + dir + "/" + n + ".lockscope.json"));
    return out;
}

// Synthetic runs: stacks and locks differ from seed to seed, so pooled ids,
// shared stacks and locks seen in some runs only all occur.
Paths synthetic(const std::string& prefix, std::initializer_list<uint64_t> seeds)
{
    Paths out;
    for (uint64_t seed : seeds) {
        out.push_back(artifactDir() + "/" + prefix + "-" + std::to_string(seed) + ".lockscope.json");
        writeCapture(lockscope::testing::makeSyntheticCapture(300, 40 + uint32_t(seed % 7), seed), out.back());
    }
    return out;
}
} // namespace

TEST(CompareSetFiles, RealRunSetsCompareAsInMemory)
{
    const Paths aaB = fixtures("aa", {"aa1", "aa2", "aa3"}), aaA = fixtures("aa", {"aa4", "aa5", "aa6"});
    EXPECT_EQ(folded(aaB, aaA), inMemory(aaB, aaA));
    const Paths base = fixtures("seed04-3v3", {"base-1", "base-2", "base-3"});
    const Paths p4 = fixtures("seed04-3v3", {"p4-1", "p4-2", "p4-3"});
    CompareOptions o;
    o.sort = CompareSort::Change;
    o.threshold_pct = 2.0;
    EXPECT_EQ(folded(base, p4, o), inMemory(base, p4, o));
    // One run a side: compareSetFiles frees the runs' own sites once shared out.
    EXPECT_EQ(folded({base[0]}, {p4[1]}, o), inMemory({base[0]}, {p4[1]}, o));
}

TEST(CompareSetFiles, OneRunSidesAndRepeatedRunsCompareAsInMemory)
{
    const Paths b = synthetic("fold-b", {1, 2, 3, 4}), a = synthetic("fold-a", {11, 12, 13});
    EXPECT_EQ(folded({b[0]}, {a[0]}), inMemory({b[0]}, {a[0]}));
    EXPECT_EQ(folded({b[0]}, a), inMemory({b[0]}, a));
    EXPECT_EQ(folded(b, {a[0]}), inMemory(b, {a[0]}));
    EXPECT_EQ(folded(b, a), inMemory(b, a));
    // The same file again: every stack is pooled once and still counts per run.
    const Paths repeated{b[1], b[1], b[2], b[1]};
    EXPECT_EQ(folded(repeated, a), inMemory(repeated, a));
}

TEST(CompareSetFiles, TheFirstBadFileInArgumentOrderIsNamed)
{
    const Paths b = synthetic("bad-b", {21, 22}), a = synthetic("bad-a", {23, 24});
    const std::string empty = artifactDir() + "/fold-empty.lockscope.json";
    test::writeFile(empty, "");
    const Paths after{a[0], empty, test::fixture("malformed/dangling-stack-id.lockscope.json"), a[1]};
    try {
        (void)compareSetFiles(b, after);
        FAIL() << "bad files compared";
    } catch (const CaptureError& e) {
        EXPECT_NE(std::string(e.what()).find("fold-empty.lockscope.json: the file is empty"), std::string::npos)
            << e.what();
    }
    EXPECT_THROW((void)compareSetFiles({}, a), std::invalid_argument);
}
