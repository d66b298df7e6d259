// SPDX-License-Identifier: GPL-2.0-or-later
// `lockscope record` failures that need no BPF: usage errors and permissions.
#include <gtest/gtest.h>

#include <filesystem>
#include <unistd.h>

#include "lockscope/capture/capture.h"
#include "run_process.h"

using namespace record_test;

namespace {
const std::string kBin = LOCKSCOPE_BIN;
}

TEST(RecordCli, UnknownFlagIsExit2OneLine)
{
    auto dir = tempDir();
    Exit e = run({kBin, "record", "--no-such-flag", "--", "true"}, dir, "badflag");
    EXPECT_EQ(e.code, 2) << e.err;
    EXPECT_EQ(lineCount(e.err), 1u) << e.err;
    EXPECT_NE(e.err.find("no-such-flag"), std::string::npos) << e.err;
}

TEST(RecordCli, BadValuesAreExit2OneLine)
{
    auto dir = tempDir();
    std::vector<std::vector<std::string>> cases{
             {"--stack-depth", "128", "--", "true"},
             {"--syscall-sample", "0", "--", "true"},
             {"--syscall-backend", "kprobe", "--", "true"},
             {"--hold-sample", "x", "--", "true"},
             {"-d", "-3", "-a"},
             {"--wait-backend", "fentry", "--", "true"},
             {"--stack-sample", "4", "--stack-budget", "100", "--", "true"},
             {"--stack-budget", "-1", "--", "true"},
             {"--timing-budget", "-1", "--", "true"},
             {"--timing-budget", "fast", "--", "true"},
             {"--hold-backend", "sometimes", "--", "true"},
             {"--lock", "0xzz", "--", "true"},
             {"--user-lock", "onlyone", "--", "true"},
             {"-p", "1", "--", "true"},
             {}};
    for (const lockscope::OptInProbe& p : lockscope::kOptInProbes) // asked for and refused at once
        cases.push_back({"--" + std::string(p.flag), "--no-" + std::string(p.flag), "--", "true"});
    for (const std::vector<std::string>& args : cases) {
        std::vector<std::string> argv{kBin, "record"};
        argv.insert(argv.end(), args.begin(), args.end());
        Exit e = runIn(argv, dir, "badvalue");
        std::string what = args.empty() ? "(no target)" : args[0];
        EXPECT_EQ(e.code, 2) << what << ": " << e.err;
        EXPECT_EQ(lineCount(e.err), 1u) << what << ": " << e.err;
    }
    // No case recorded: the child ran in dir, where a default-named
    // (lockscope-DATE-TIME.lockscope.json) or partial output would appear.
    for (const auto& entry : std::filesystem::directory_iterator(dir)) {
        const std::string name = entry.path().filename().string();
        EXPECT_TRUE(name == "badvalue.out" || name == "badvalue.err") << "a bad value left " << name;
    }
}

TEST(RecordCli, WithoutPrivilegesOneClearLine)
{
    if (geteuid() != 0)
        GTEST_SKIP() << "skipped: needs root to drop to an unprivileged user with setpriv";
    if (access("/usr/bin/setpriv", X_OK) != 0)
        GTEST_SKIP() << "skipped: setpriv (util-linux) not installed";
    auto dir = tempDir();
    std::filesystem::permissions(dir, std::filesystem::perms::all);
    Exit e = run({"/usr/bin/setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", "--inh-caps=-all",
                  kBin, "record", "-o", dir + "/x.lockscope.json", "--", "true"},
                 dir, "noperm");
    EXPECT_EQ(e.code, 1) << e.err;
    EXPECT_EQ(lineCount(e.err), 1u) << e.err;
    EXPECT_NE(e.err.find("root or CAP_BPF+CAP_PERFMON"), std::string::npos) << e.err;
    EXPECT_FALSE(std::filesystem::exists(dir + "/x.lockscope.json"));
}

// A bad -o fails before any probe is attached (no per-probe lines, no
// recording), not after a long recording has been made for nothing.
TEST(RecordCli, BadOutputFailsBeforeRecording)
{
    auto dir = tempDir();
    struct Case {
        std::string output, expect;
    };
    for (const Case& c : {Case{dir + "/no/such/dir/x.lockscope.json", "cannot create a temporary file in"},
                          Case{dir, "is a directory"}}) {
        Exit e = run({kBin, "record", "-d", "1", "-o", c.output, "--", "sleep", "1000"}, dir, "badout");
        EXPECT_EQ(e.code, 1) << c.output << ": " << e.err;
        EXPECT_EQ(lineCount(e.err), 1u) << c.output << ": " << e.err;
        EXPECT_NE(e.err.find(c.expect), std::string::npos) << e.err;
        EXPECT_EQ(e.err.find("attached"), std::string::npos) << e.err;
    }
}

// A repeatable option right before `--` once swallowed the `--`: the
// workload's own flags were then taken as record's ("--a not expected").
TEST(RecordCli, RepeatableOptionsStopAtTheDoubleDash)
{
    auto dir = tempDir();
    const std::string out = dir + "/no/such/dir/x.lockscope.json";
    for (const std::vector<std::string>& opt :
         std::vector<std::vector<std::string>>{{"--lock", "rename_lock+0x4"},
                                               {"--lock-type", "spinlock"},
                                               {"--stack-contains", "getcwd"},
                                               {"--user-lock", "/bin/true:lock:unlock"}}) {
        std::vector<std::string> argv{kBin, "record", "-o", out};
        argv.insert(argv.end(), opt.begin(), opt.end());
        argv.insert(argv.end(), {"--", "/bin/echo", "--a", "1", "--b"});
        Exit e = run(argv, dir, "dashdash");
        EXPECT_EQ(e.code, 1) << opt[0] << ": " << e.err;
        EXPECT_NE(e.err.find("cannot create a temporary file in"), std::string::npos)
            << opt[0] << ": parsing should reach the output check: " << e.err;
    }
}
