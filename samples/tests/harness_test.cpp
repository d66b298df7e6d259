// SPDX-License-Identifier: GPL-2.0-or-later
// Runs the lockscope-scaling executable briefly and loads its output.
#include <gtest/gtest.h>

#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <string>

#include "lockscope/scaling/pair.h"
#include "lockscope/scaling_format/scaling_io.h"

using namespace lockscope::scaling;

TEST(Harness, WritesAFileTheReaderLoads)
{
    std::string out = testing::TempDir() + "harness-" + std::to_string(getpid()) + ".json";
    // A fixed amount of work per point (not a duration): every point has its
    // operations however loaded the machine is.
    std::string cmd = std::string(LOCKSCOPE_SCALING_EXE) + " --ops 300 --max-threads 3 --output " + out +
                      " > /dev/null";
    int st = std::system(cmd.c_str());
    ASSERT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == 0) << cmd;
    ScalingRun run = readScaling(out);
    std::remove(out.c_str());
    EXPECT_EQ(run.meta.thread_counts, (std::vector<unsigned>{1, 2, 3}));
    ASSERT_EQ(run.pairs.size(), pairs().size());
    for (const auto& info : pairs()) {
        const ScalingPair* p = run.pair(info.id);
        ASSERT_NE(p, nullptr) << info.id;
        EXPECT_EQ(p->kernel_change, info.kernelChange);
        for (const char* v : {"before", "after"}) {
            const ScalingVariant* var = p->variant(v);
            ASSERT_NE(var, nullptr);
            ASSERT_EQ(var->points.size(), 3u);
            for (const auto& pt : var->points) {
                EXPECT_EQ(pt.ops, 300u * pt.threads) << info.id << "/" << v;
                EXPECT_GT(pt.ops_per_sec, 0.0) << info.id << "/" << v << "/" << pt.threads;
                EXPECT_FALSE(pt.locks.empty());
                for (const auto& l : pt.locks)
                    EXPECT_GT(l.wait.count() + l.hold.count(), 0u) << l.name;
            }
        }
        EXPECT_TRUE(p->speedup(2).has_value());
    }
}

TEST(Harness, RejectsBadArguments)
{
    for (const char* args : {" --pairs nope", " --max-threads 0", " --duration -1", " --output"}) {
        std::string cmd = std::string(LOCKSCOPE_SCALING_EXE) + args + " > /dev/null 2>&1";
        int st = std::system(cmd.c_str());
        EXPECT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == 2) << args;
    }
}

TEST(Harness, UnwritableOutputIsAnError)
{
    std::string cmd = std::string(LOCKSCOPE_SCALING_EXE) +
                      " --duration 0.01 --max-threads 1 --pairs sem-lock-scope --output /nonexistent/x.json"
                      " > /dev/null 2>&1";
    int st = std::system(cmd.c_str());
    EXPECT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == 1);
}
