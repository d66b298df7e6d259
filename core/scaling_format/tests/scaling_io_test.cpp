// SPDX-License-Identifier: GPL-2.0-or-later
#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <string>

#include <unistd.h>

#include "lockscope/scaling_format/scaling_io.h"

using namespace lockscope;
using namespace lockscope::scaling;

namespace {

ScalingRun sample()
{
    ScalingRun run;
    run.meta = {"0.1.0", "2024-01-02T03:04:05Z", "host", "6.18.0", "cpu", 2, 0.5, {1, 2, 4}, {"lockscope-scaling"}};
    ScalingPair p{"sem-postwait", "t", "ipc/sem.c: optimize semtimedop", "sem-postwait", {}};
    for (const char* name : {"before", "after"}) {
        ScalingVariant v{name, "d", {}};
        for (unsigned t : {1u, 2u, 4u}) {
            ScalingPoint pt{t, 1000ull * t, 0.5, (name[0] == 'a' ? 4000.0 : 2000.0) * t, {}};
            ScalingLock l{"sem.lock", "spinlock", {}, {}};
            l.wait.add(0, 10);
            l.wait.add(1500);
            l.hold.add(90, 11);
            pt.locks.push_back(l);
            v.points.push_back(pt);
        }
        p.variants.push_back(v);
    }
    run.pairs.push_back(p);
    return run;
}

std::string errorOf(const std::string& text)
{
    try {
        parseScaling(text);
    } catch (const ScalingError& e) {
        return e.what();
    }
    return "(no error)";
}

} // namespace

TEST(ScalingIo, RoundTripsThroughAFile)
{
    ScalingRun run = sample();
    std::string path = testing::TempDir() + "scaling-io-" + std::to_string(getpid()) + ".json";
    writeScaling(run, path);
    ScalingRun back = readScaling(path);
    std::remove(path.c_str());
    EXPECT_EQ(toJson(back), toJson(run));
    const ScalingPair* p = back.pair("sem-postwait");
    ASSERT_NE(p, nullptr);
    EXPECT_DOUBLE_EQ(p->speedup(2).value(), 2.0);
    EXPECT_FALSE(p->speedup(3).has_value());
    EXPECT_EQ(p->variant("before")->at(4)->locks[0].wait.count(), 11u);
    EXPECT_EQ(p->variant("after")->at(1)->locks[0].hold.max(), 90u);
}

TEST(ScalingIo, ErrorsNameTheJsonPath)
{
    auto doc = toJson(sample());
    auto bad = doc;
    bad["pairs"][0]["variants"][1]["points"][2]["ops"] = "x";
    EXPECT_EQ(errorOf(bad.dump()), "pairs[0].variants[1].points[2].ops: expected an unsigned integer, got \"x\"");
    bad = doc;
    bad["pairs"][0]["variants"][0]["points"][0]["locks"][0]["wait"]["count"] = 3;
    EXPECT_EQ(errorOf(bad.dump()), "pairs[0].variants[0].points[0].locks[0].wait: inconsistent histogram "
                                   "(bucket counts, count, min_ns and max_ns disagree)");
    bad = doc;
    bad["pairs"][0]["variants"][0]["points"][1]["threads"] = 1;
    EXPECT_EQ(errorOf(bad.dump()), "pairs[0].variants[0].points[1].threads: thread counts must ascend");
    bad = doc;
    bad["version"] = 2;
    EXPECT_EQ(errorOf(bad.dump()), "version: unsupported version 2 (this build reads version 1)");
    bad = doc;
    bad["format"] = "lockscope-capture";
    EXPECT_NE(errorOf(bad.dump()).find("format: expected \"lockscope-scaling\""), std::string::npos);
    bad = doc;
    bad["meta"].erase("cpus");
    EXPECT_EQ(errorOf(bad.dump()), "meta.cpus: missing");
    bad = doc;
    bad["pairs"][0]["variants"][1]["name"] = "before";
    EXPECT_EQ(errorOf(bad.dump()), "pairs[0].variants[1].name: duplicate variant \"before\"");
    EXPECT_EQ(errorOf("[1]"), "(top level): expected a JSON object, got [1]");
    EXPECT_EQ(errorOf("{").rfind("not valid JSON: ", 0), 0u);
}

TEST(ScalingIo, MissingFileIsOneLine)
{
    try {
        readScaling("/nonexistent/dir/run.json");
        FAIL() << "no error";
    } catch (const ScalingError& e) {
        EXPECT_EQ(std::string(e.what()), "/nonexistent/dir/run.json: cannot open (check the path and permissions)");
    }
}
