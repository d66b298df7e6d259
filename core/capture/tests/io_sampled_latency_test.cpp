// SPDX-License-Identifier: GPL-2.0-or-later
// Sampled syscall latency (record --syscall-sample N): the period and the
// exact call count are optional members of a latency entry.
#include <gtest/gtest.h>

#include "lockscope/capture/io.h"
#include "sample_capture.h"

namespace lockscope {
namespace {

TEST(CaptureSampledLatency, PeriodAndCallsRoundTripAndDriveCalls)
{
    Capture c = testing::makeSemopCapture(testing::SemopScenario::Baseline);
    ASSERT_GE(c.syscalls.size(), 2u);
    LatencyEntry& e = c.syscalls[1];
    const uint64_t timed = e.latency.count();
    EXPECT_EQ(e.calls(), timed) << "not sampled: every call was timed";
    e.sample_period = 16;
    e.all_calls = timed * 16 + 7;
    const nlohmann::json j = toJson(c);
    EXPECT_EQ(j["syscalls"][1]["sample_period"], 16);
    EXPECT_EQ(j["syscalls"][1]["calls"], timed * 16 + 7);
    EXPECT_FALSE(j["syscalls"][0].contains("sample_period")) << "unsampled entries keep the old shape";
    const Capture back = fromJson(j);
    EXPECT_EQ(back, c);
    EXPECT_EQ(back.syscalls[1].calls(), timed * 16 + 7);
}

TEST(CaptureSampledLatency, WithoutACountCallsAreEstimated)
{
    Capture c = testing::makeSemopCapture(testing::SemopScenario::Baseline);
    nlohmann::json j = toJson(c);
    j["syscalls"][1]["sample_period"] = 4;
    const Capture back = fromJson(j);
    EXPECT_EQ(back.syscalls[1].all_calls, 0u);
    EXPECT_EQ(back.syscalls[1].calls(), back.syscalls[1].latency.count() * 4);
}

} // namespace
} // namespace lockscope
