// SPDX-License-Identifier: GPL-2.0-or-later
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>

#include "test_support.h"

// The CLI's bad-input contract: one clear line on stderr, non-zero exit,
// never a crash. Runs the real lockscope binary.
namespace {
using lockscope::reports::test::artifactDir;
using lockscope::reports::test::fixture;
using lockscope::reports::test::readFile;
using lockscope::reports::test::run;
using lockscope::reports::test::writeFile;

std::string cli() { return LOCKSCOPE_CLI; }

size_t lines(const std::string& s) { return size_t(std::count(s.begin(), s.end(), '\n')); }
} // namespace

TEST(CliInput, CaptureFailingValidation)
{
    std::string out;
    const int rc = run(cli() + " report " + fixture("malformed/dangling-stack-id.lockscope.json") + " 2>&1 >/dev/null", &out);
    EXPECT_EQ(rc, 1);
    EXPECT_EQ(lines(out), 1u) << out;
    EXPECT_NE(out.find("dangling-stack-id.lockscope.json"), std::string::npos) << out;
}

TEST(CliInput, EmptyCaptureFile)
{
    const std::string empty = artifactDir() + "/empty.lockscope.json";
    writeFile(empty, "");
    std::string out;
    EXPECT_EQ(run(cli() + " report " + empty + " 2>&1 >/dev/null", &out), 1);
    EXPECT_EQ(lines(out), 1u) << out;
    EXPECT_NE(out.find("the file is empty"), std::string::npos) << out;
}

TEST(CliInput, PairWithDifferentFormatVersions)
{
    std::string text = readFile(fixture("patched.lockscope.json"));
    const auto pos = text.find("\"version\": 1");
    ASSERT_NE(pos, std::string::npos);
    text.replace(pos, 12, "\"version\": 3");
    const std::string newer = artifactDir() + "/patched-newer.lockscope.json";
    writeFile(newer, text);
    std::string out;
    EXPECT_EQ(run(cli() + " compare " + fixture("baseline.lockscope.json") + " " + newer + " 2>&1 >/dev/null", &out), 1);
    EXPECT_EQ(lines(out), 1u) << out;
    EXPECT_NE(out.find("is capture format version 1 or 2 but"), std::string::npos) << out;
}

// The version each file holds comes from readCapture's error: a newer file
// first is named against the next file, and files that are all newer get
// readCapture's own "upgrade lockscope".
TEST(CliInput, RunSetsWithDifferentFormatVersions)
{
    std::string text = readFile(fixture("patched.lockscope.json"));
    const auto pos = text.find("\"version\": 1");
    ASSERT_NE(pos, std::string::npos);
    text.replace(pos, 12, "\"version\": 3");
    const std::string newer = artifactDir() + "/sets-newer.lockscope.json";
    writeFile(newer, text);
    const std::string v1 = fixture("baseline.lockscope.json");
    std::string out;
    EXPECT_EQ(run(cli() + " compare " + newer + " -- " + v1 + " " + v1 + " 2>&1 >/dev/null", &out), 1);
    EXPECT_EQ(lines(out), 1u) << out;
    EXPECT_NE(out.find(newer + " is capture format version 3 but " + v1 + " is version 1 or 2"), std::string::npos) << out;
    out.clear();
    EXPECT_EQ(run(cli() + " compare " + v1 + " " + v1 + " -- " + newer + " 2>&1 >/dev/null", &out), 1);
    EXPECT_NE(out.find(v1 + " is capture format version 1 or 2 but " + newer + " is version 3"), std::string::npos) << out;
    out.clear();
    EXPECT_EQ(run(cli() + " compare " + newer + " " + newer + " 2>&1 >/dev/null", &out), 1);
    EXPECT_EQ(lines(out), 1u) << out;
    EXPECT_NE(out.find("format version 3 is newer than this lockscope reads (2): upgrade lockscope"), std::string::npos)
        << out;
}

TEST(CliInput, FailIfWorseGatesTheExitCode)
{
    std::string out;
    const std::string b = fixture("baseline.lockscope.json"), a = fixture("patched.lockscope.json");
    const std::string bs = b + " " + b, as = a + " " + a;
    EXPECT_EQ(run(cli() + " compare " + bs + " -- " + as + " --fail-if-worse 10 >/dev/null", &out), 0) << out;
    out.clear();
    EXPECT_EQ(run(cli() + " compare " + as + " -- " + bs + " --fail-if-worse 10 >/dev/null", &out), 3) << out;
    EXPECT_NE(out.find("regression: lock spinlock@sem_lock"), std::string::npos) << out;
    // One run a side gives no verdict: a gate on it is refused, not left open.
    out.clear();
    EXPECT_EQ(run(cli() + " compare " + a + " " + b + " --fail-if-worse 10 2>&1 >/dev/null", &out), 2) << out;
    EXPECT_EQ(lines(out), 1u) << out;
    EXPECT_NE(out.find("--fail-if-worse needs two or more runs a side"), std::string::npos) << out;
    // One run against three is judged (the three runs' spread stands for both); against two it is refused.
    out.clear();
    EXPECT_EQ(run(cli() + " compare " + as + " " + a + " -- " + b + " --fail-if-worse 10 >/dev/null", &out), 3) << out;
    EXPECT_NE(out.find("regression: lock spinlock@sem_lock"), std::string::npos) << out;
    out.clear();
    EXPECT_EQ(run(cli() + " compare " + bs + " -- " + a + " --fail-if-worse 10 2>&1 >/dev/null", &out), 2) << out;
    EXPECT_NE(out.find("or three or more against one"), std::string::npos) << out;
}

TEST(CliInput, UnknownLockAndFormat)
{
    std::string out;
    EXPECT_EQ(run(cli() + " report " + fixture("baseline.lockscope.json") + " --lock nope 2>&1 >/dev/null", &out), 1);
    EXPECT_EQ(lines(out), 1u) << out;
    out.clear();
    EXPECT_EQ(run(cli() + " export " + fixture("baseline.lockscope.json") + " --format svg 2>&1 >/dev/null", &out), 2);
    EXPECT_EQ(lines(out), 1u) << out;
}

TEST(CliInput, ImportThenReport)
{
    const std::string out = artifactDir() + "/lock_stat.lockscope.json";
    std::string log;
    ASSERT_EQ(run(cli() + " import lock-stat " + std::string(LOCKSCOPE_REPORTS_TESTDATA) + "/fixtures/lock_stat.txt -o " +
                      out,
                  &log),
              0)
        << log;
    log.clear();
    ASSERT_EQ(run(cli() + " report " + out + " --format md", &log), 0) << log;
    EXPECT_NE(log.find("&sma->sem_perm.lock"), std::string::npos);
}

TEST(CliInput, CompareRunSetsAndDirectories)
{
    using lockscope::reports::test::testdata;
    auto aa = [](int i) { return testdata("fixtures/aa/aa" + std::to_string(i) + ".lockscope.json"); };
    std::string out;
    // B1 B2 B3 -- A1 A2 A3, options after the sets still parse.
    ASSERT_EQ(run(cli() + " compare " + aa(1) + " " + aa(3) + " " + aa(5) + " -- " + aa(2) + " " + aa(4) + " " + aa(6) +
                      " --format json 2>&1",
                  &out),
              0)
        << out;
    EXPECT_NE(out.find("\"before\": 3"), std::string::npos) << out.substr(0, 2000);
    // Two directories: every *.lockscope.json inside each.
    const std::string dir = testdata("fixtures/aa");
    out.clear();
    ASSERT_EQ(run(cli() + " compare " + dir + " " + dir + " --format md 2>&1", &out), 0) << out;
    EXPECT_NE(out.find("n = 6 runs before, 6 after"), std::string::npos) << out;
    // One capture alone, or an empty directory: one line, non-zero.
    out.clear();
    EXPECT_EQ(run(cli() + " compare " + aa(1) + " 2>&1 >/dev/null", &out), 2);
    EXPECT_EQ(lines(out), 1u) << out;
    const std::string empty = artifactDir() + "/no-captures";
    std::filesystem::create_directories(empty);
    out.clear();
    EXPECT_EQ(run(cli() + " compare " + empty + " " + aa(1) + " 2>&1 >/dev/null", &out), 1);
    EXPECT_EQ(lines(out), 1u) << out;
    EXPECT_NE(out.find("holds no *.lockscope.json"), std::string::npos) << out;
}
