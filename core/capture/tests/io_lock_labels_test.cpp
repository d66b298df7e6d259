// SPDX-License-Identifier: GPL-2.0-or-later
// A lock's name (record --lock-names) and cgroup (record --per-cgroup): optional,
// additive members of format version 1, absent unless known.
#include <gtest/gtest.h>

#include <string>

#include "lockscope/capture/io.h"
#include "sample_capture.h"

namespace lockscope {
namespace {

std::string errorOf(const nlohmann::json& doc)
{
    try {
        fromJson(doc);
    } catch (const CaptureError& e) {
        return e.what();
    }
    return "(accepted)";
}

TEST(CaptureLockLabels, NameAndCgroupRoundTripAndAreOptional)
{
    Capture c = testing::makeSemopCapture(testing::SemopScenario::Baseline);
    ASSERT_GE(c.locks.size(), 2u);
    c.locks[0].name = "&kmalloc-cg-1k";
    c.locks[0].cgroup = "/ls/a";
    const nlohmann::json j = toJson(c);
    EXPECT_EQ(j["locks"][0]["name"], "&kmalloc-cg-1k");
    EXPECT_EQ(j["locks"][0]["cgroup"], "/ls/a");
    EXPECT_FALSE(j["locks"][1].contains("name")) << "unknown names are not written";
    EXPECT_FALSE(j["locks"][1].contains("cgroup"));
    EXPECT_EQ(parseCapture(j.dump()), c);

    auto doc = j;
    doc["locks"][0]["name"] = "";
    EXPECT_NE(errorOf(doc).find("locks[0].name"), std::string::npos) << errorOf(doc);
    doc = j;
    doc["locks"][0]["cgroup"] = 3;
    EXPECT_NE(errorOf(doc).find("locks[0].cgroup"), std::string::npos) << errorOf(doc);
}

} // namespace
} // namespace lockscope
