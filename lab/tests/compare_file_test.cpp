// SPDX-License-Identifier: GPL-2.0-or-later
// The lab compares in-process (writeComparison) instead of running
// `lockscope compare`; its compare-<name>.txt must still be what that
// command prints for the same captures, for one run per kernel and for
// run sets. The command is the real built binary, the captures are fixtures.
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <unistd.h>

#include "lockscope/lab/lab.h"
#include "lab_test_files.h"
#include "lockscope/lab/process.h"

namespace fs = std::filesystem;
using namespace lockscope::lab;
using lab_test::slurp;

namespace {

fs::path tempDir(const std::string& tag) { return lab_test::tempDir("compare", tag); }

// `lockscope compare BASE... -- OTHER...`: its exit code and, as `stream`
// says, its standard output or its standard error.
enum class Stream { Out, Err };
ProcessResult cliCompare(const std::vector<std::string>& base, const std::vector<std::string>& other, Stream stream)
{
    std::string command = shellQuote(LOCKSCOPE_BIN) + " compare";
    for (const auto& f : base)
        command += " " + shellQuote(f);
    command += " --";
    for (const auto& f : other)
        command += " " + shellQuote(f);
    return runProcess({"sh", "-c", command + (stream == Stream::Out ? " 2>/dev/null" : " 2>&1 >/dev/null")}, 120);
}

std::vector<std::string> runs(const std::string& stem, int n)
{
    std::vector<std::string> files;
    for (int i = 1; i <= n; ++i)
        files.push_back(std::string(LOCKSCOPE_REPORTS_FIXTURES) + "/seed04-3v3/" + stem + "-" +
                        std::to_string(i) + ".lockscope.json");
    return files;
}

// The file the lab writes for `name` against the CLI's output on the same sets.
void expectFileMatchesCli(const std::string& name, const std::vector<std::string>& base,
                          const std::vector<std::string>& other)
{
    const fs::path dir = tempDir(name);
    const ComparisonFile c = writeComparison(dir, name, base, other);
    EXPECT_EQ(c.path, dir / ("compare-" + name + ".txt"));
    EXPECT_EQ(c.exit_code, 0) << c.report;
    const ProcessResult cli = cliCompare(base, other, Stream::Out);
    ASSERT_TRUE(cli.ok()) << cli.output;
    ASSERT_FALSE(cli.output.empty());
    EXPECT_EQ(slurp(c.path), cli.output);
    EXPECT_EQ(c.report, cli.output);
    fs::remove_all(dir);
}

} // namespace

TEST(LabCompareFile, OneRunPerKernelIsWhatLockscopeComparePrints)
{
    const std::string fixtures = LOCKSCOPE_CAPTURE_FIXTURES;
    expectFileMatchesCli("patched", {fixtures + "/baseline.lockscope.json"}, {fixtures + "/patched.lockscope.json"});
}

TEST(LabCompareFile, RunSetsAreWhatLockscopeComparePrints)
{
    // Three runs a side: the run statistics (mean ± CoeffVar, Welch's t) that lab --runs gets.
    expectFileMatchesCli("p4", runs("base", 3), runs("p4", 3));
}

// A side that cannot be read: the file holds the one line the command
// prints on its standard error, and the exit code is the command's.
TEST(LabCompareFile, AFailedCompareIsTheCommandsErrorLine)
{
    const fs::path dir = tempDir("missing");
    const std::vector<std::string> base = {std::string(LOCKSCOPE_CAPTURE_FIXTURES) + "/baseline.lockscope.json"};
    const std::vector<std::string> other = {(dir / "none.lockscope.json").string()};
    const ComparisonFile c = writeComparison(dir, "missing", base, other);
    const ProcessResult cli = cliCompare(base, other, Stream::Err);
    EXPECT_EQ(c.exit_code, cli.exit_code);
    EXPECT_EQ(c.exit_code, 1);
    EXPECT_EQ(c.report, cli.output);
    EXPECT_EQ(slurp(c.path), c.report);
    EXPECT_NE(c.report.find(other.front()), std::string::npos) << c.report;
    EXPECT_EQ(c.report.find('\n'), c.report.size() - 1) << c.report;
    fs::remove_all(dir);
}
