// SPDX-License-Identifier: GPL-2.0-or-later
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "lockscope/capture/io.h"
#include "sample_capture.h"

namespace lockscope {
namespace {

using testing::makeSemopCapture;
using testing::SemopScenario;

TEST(CaptureRoundTrip, RealisticCaptureSurvivesJson)
{
    for (auto scenario : { SemopScenario::Baseline, SemopScenario::Patched }) {
        const Capture c = makeSemopCapture(scenario);
        const Capture back = fromJson(toJson(c));
        EXPECT_EQ(back, c);
        // Field by field too, so that a failure says where.
        EXPECT_EQ(back.meta, c.meta);
        EXPECT_EQ(back.probes, c.probes);
        EXPECT_EQ(back.stats, c.stats);
        EXPECT_EQ(back.stacks, c.stacks);
        EXPECT_EQ(back.locks, c.locks);
        EXPECT_EQ(back.syscalls, c.syscalls);
        EXPECT_EQ(back.functions, c.functions);
        EXPECT_EQ(back.cpu, c.cpu);
        EXPECT_EQ(back.workload, c.workload);
    }
}

// Each counter has its own JSON name (a table entry pointing at the wrong
// field would swap or lose one), and the optional ones are left out at 0.
TEST(CaptureRoundTrip, EveryStatsCounterKeepsItsOwnValue)
{
    Capture c = makeSemopCapture(SemopScenario::Baseline);
    c.stats = Stats { 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17 };
    const nlohmann::json j = toJson(c);
    EXPECT_EQ(j["stats"].size(), 17u);
    EXPECT_EQ(j["stats"]["hold_races"], 12);
    EXPECT_EQ(j["stats"]["cpu_unstacked"], 15);
    EXPECT_EQ(j["stats"]["owner_stacks_unsampled"], 16);
    EXPECT_EQ(j["stats"]["stale_holds"], 17);
    EXPECT_EQ(parseCapture(j.dump()).stats, c.stats);

    c.stats = Stats {};
    const nlohmann::json zero = toJson(c)["stats"];
    std::vector<std::string> names;
    for (const auto& [name, value] : zero.items())
        names.push_back(name);
    EXPECT_EQ(names, (std::vector<std::string> { "aborted_waits", "events", "lost", "map_full", "recursion_misses",
                         "stack_failures", "unmatched" }));
    EXPECT_EQ(parseCapture(toJson(c).dump()).stats, Stats {});
}

TEST(CaptureRoundTrip, TextRoundTripIsStable)
{
    const Capture c = makeSemopCapture(SemopScenario::Baseline);
    const std::string compact = toJson(c).dump();
    const std::string pretty = toJson(c).dump(2);
    EXPECT_EQ(parseCapture(compact), c);
    EXPECT_EQ(parseCapture(pretty), c);
    EXPECT_EQ(toJson(parseCapture(compact)).dump(), compact);
}

TEST(CaptureRoundTrip, RealisticCaptureHasWhatTheFormatPromises)
{
    const Capture c = makeSemopCapture(SemopScenario::Baseline);
    const auto j = toJson(c);
    EXPECT_EQ(j.at("format"), "lockscope-capture");
    EXPECT_EQ(j.at("version"), 1);
    // Addresses are hex strings, histograms have 64 buckets, stacks say their kind.
    EXPECT_TRUE(j.at("locks").at(0).at("address").is_string());
    EXPECT_EQ(j.at("locks").at(0).at("address"), "0xffff8881047a3c40");
    EXPECT_TRUE(
        j.at("stacks").at(0).at("frames").at(0).at("address").get<std::string>().starts_with("0xffffffff8"));
    EXPECT_EQ(j.at("locks").at(0).at("wait").at("hist").size(), 64u);
    EXPECT_EQ(j.at("stacks").at(0).at("kind"), "kernel");
    EXPECT_EQ(j.at("stacks").at(0).at("frames").at(0).at("function"), "queued_spin_lock_slowpath");
    EXPECT_NEAR(c.cpu.lockShare(), 0.59, 0.005);
    EXPECT_GT(makeSemopCapture(SemopScenario::Patched).workload.results.at("ops_per_sec").get<double>(),
        2 * c.workload.results.at("ops_per_sec").get<double>());
}

TEST(CaptureRoundTrip, OptionalFieldsAbsentStayAbsent)
{
    Capture c = makeSemopCapture(SemopScenario::Patched);
    c.workload.exit_status.reset();
    c.workload.signal = 9;
    c.stacks[0].frames[0].address.reset(); // redacted
    auto j = toJson(c);
    EXPECT_FALSE(j.at("workload").contains("exit_status"));
    EXPECT_FALSE(j.at("stacks").at(0).at("frames").at(0).contains("address"));
    EXPECT_FALSE(j.at("locks").at(0).contains("address"));
    EXPECT_FALSE(j.at("meta").contains("syscall_timing_skipped"));
    EXPECT_EQ(fromJson(j), c);
    // null is read as absent as well (hand-edited files, other writers).
    j["workload"]["exit_status"] = nullptr;
    EXPECT_EQ(fromJson(j), c);
}

TEST(CaptureRoundTrip, SyscallTimingSkippedSurvives)
{
    Capture c = makeSemopCapture(SemopScenario::Baseline);
    c.meta.syscall_timing_skipped = "syscall latency not timed by default: fentry refused";
    const auto j = toJson(c);
    EXPECT_EQ(j.at("meta").at("syscall_timing_skipped"), c.meta.syscall_timing_skipped);
    EXPECT_EQ(fromJson(j), c);
    auto bad = j;
    bad["meta"]["syscall_timing_skipped"] = 3;
    EXPECT_THROW(fromJson(bad), CaptureError);
}

TEST(CaptureRoundTrip, ImpossibleHoldsAreWrittenWhenNonZero)
{
    Capture c = makeSemopCapture(SemopScenario::Patched);
    EXPECT_FALSE(toJson(c).at("stats").contains("impossible_holds"));
    c.stats.impossible_holds = 3;
    auto j = toJson(c);
    EXPECT_EQ(j.at("stats").at("impossible_holds"), 3);
    EXPECT_EQ(fromJson(j).stats.impossible_holds, 3u);
}

TEST(CaptureRoundTrip, OwnerStacksUnsampledAreWrittenWhenNonZero)
{
    Capture c = makeSemopCapture(SemopScenario::Patched);
    EXPECT_FALSE(toJson(c).at("stats").contains("owner_stacks_unsampled"));
    c.stats.owner_stacks_unsampled = 5;
    auto j = toJson(c);
    EXPECT_EQ(j.at("stats").at("owner_stacks_unsampled"), 5);
    EXPECT_EQ(fromJson(j).stats.owner_stacks_unsampled, 5u);
}

TEST(CaptureRoundTrip, HoldRacesAreWrittenWhenNonZero)
{
    Capture c = makeSemopCapture(SemopScenario::Patched);
    EXPECT_FALSE(toJson(c).at("stats").contains("hold_races"));
    c.stats.hold_races = 5;
    auto j = toJson(c);
    EXPECT_EQ(j.at("stats").at("hold_races"), 5);
    EXPECT_EQ(fromJson(j).stats.hold_races, 5u);
}

TEST(CaptureRoundTrip, ExtremeValuesSurvive)
{
    Capture c = makeSemopCapture(SemopScenario::Baseline);
    c.stats.events = UINT64_MAX;
    c.locks[0].address = UINT64_MAX;
    Log2Hist h;
    h.add(UINT64_MAX, 3); // total saturates
    h.add(0);
    c.locks[1].wait = h;
    c.locks[1].sites[0].wait = h;
    c.stacks[0].id = UINT32_MAX;
    c.locks[0].sites[0].stack_id = UINT32_MAX;
    for (auto& sc : c.cpu.stacks)
        if (sc.stack_id == 11)
            sc.stack_id = UINT32_MAX;
    c.workload.exit_status = -1;
    c.meta.label = "b\xc3\xa4se \"line\"\n\ttab";
    EXPECT_EQ(fromJson(toJson(c)), c);
    EXPECT_EQ(parseCapture(toJson(c).dump()), c);
}

TEST(CaptureRoundTrip, EmptyCaptureRoundTrips)
{
    const Capture c;
    EXPECT_EQ(fromJson(toJson(c)), c);
}

} // namespace
} // namespace lockscope
