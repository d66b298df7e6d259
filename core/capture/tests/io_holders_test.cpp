// SPDX-License-Identifier: GPL-2.0-or-later
// Holder stacks in the capture (record --holder-stacks): an optional,
// additive part of format version 1, read and written like the rest.
#include <gtest/gtest.h>

#include <string>

#include "lockscope/capture/io.h"
#include "sample_capture.h"

namespace lockscope {
namespace {

// The baseline sample with holders on the semaphore lock's first site: two
// kernel stacks of the capture (12 and 13 are sem_lock paths) held it.
Capture withHolders()
{
    Capture c = testing::makeSemopCapture(testing::SemopScenario::Baseline);
    LockSite& site = c.locks.at(0).sites.at(0);
    site.holders = { Holder { 12, 4000, 9'000'000 }, Holder { 13, 25, 80'000 } };
    c.stats.holder_not_found = 17;
    return c;
}

std::string errorOf(const nlohmann::json& doc)
{
    try {
        fromJson(doc);
    } catch (const CaptureError& e) {
        return e.what();
    }
    return "(accepted)";
}

TEST(CaptureHolders, RoundTripKeepsHoldersAndTheNotFoundCount)
{
    const Capture c = withHolders();
    const nlohmann::json j = toJson(c);
    ASSERT_TRUE(j["locks"][0]["sites"][0].contains("holders"));
    EXPECT_EQ(j["locks"][0]["sites"][0]["holders"][0]["stack_id"], 12);
    EXPECT_EQ(j["stats"]["holder_not_found"], 17);
    const Capture back = parseCapture(j.dump());
    EXPECT_EQ(back.locks, c.locks);
    EXPECT_EQ(back.stats, c.stats);
    EXPECT_EQ(back, c);
}

// record --lock-owner: a holder naming the owner task, its stack where the owner was.
TEST(CaptureHolders, OwnerTaskRoundTripsAndIsOptional)
{
    Capture c = withHolders();
    c.locks.at(0).sites.at(0).holders.push_back(Holder { 12, 3, 500, 4242u, "ls-owner" });
    const nlohmann::json j = toJson(c);
    const auto& hs = j["locks"][0]["sites"][0]["holders"];
    EXPECT_FALSE(hs[0].contains("owner_tid")) << "spinlock holders name no task";
    EXPECT_EQ(hs[2]["owner_tid"], 4242);
    EXPECT_EQ(hs[2]["owner_comm"], "ls-owner");
    EXPECT_EQ(parseCapture(j.dump()), c);

    auto doc = j;
    doc["locks"][0]["sites"][0]["holders"][2]["owner_tid"] = -1;
    EXPECT_NE(errorOf(doc).find("locks[0].sites[0].holders[2].owner_tid"), std::string::npos) << errorOf(doc);
    doc = j;
    doc["locks"][0]["sites"][0]["holders"][2]["owner_comm"] = 7;
    EXPECT_NE(errorOf(doc).find("locks[0].sites[0].holders[2].owner_comm"), std::string::npos) << errorOf(doc);
}

TEST(CaptureHolders, CapturesWithoutHoldersWriteNoHolderFields)
{
    const Capture c = testing::makeSemopCapture(testing::SemopScenario::Baseline);
    const nlohmann::json j = toJson(c);
    for (const auto& lock : j["locks"])
        for (const auto& site : lock["sites"])
            EXPECT_FALSE(site.contains("holders"));
    EXPECT_FALSE(j["stats"].contains("holder_not_found"));
}

TEST(CaptureHolders, OlderCapturesWithoutTheFieldsLoad)
{
    const Capture c = readCapture(std::string(LOCKSCOPE_CAPTURE_FIXTURES) + "/baseline.lockscope.json");
    ASSERT_FALSE(c.locks.empty());
    for (const auto& lock : c.locks)
        for (const auto& site : lock.sites)
            EXPECT_TRUE(site.holders.empty());
    EXPECT_EQ(c.stats.holder_not_found, 0u);
}

TEST(CaptureHolders, MalformedHoldersGiveOneLineWithThePath)
{
    const nlohmann::json valid = toJson(withHolders());
    auto doc = valid;
    doc["locks"][0]["sites"][0]["holders"] = 5;
    EXPECT_EQ(errorOf(doc), "locks[0].sites[0].holders: expected an array, got 5");
    doc = valid;
    doc["locks"][0]["sites"][0]["holders"][1]["stack_id"] = 999;
    EXPECT_EQ(errorOf(doc), "locks[0].sites[0].holders[1].stack_id: no stack with id 999 in stacks");
    doc = valid;
    doc["locks"][0]["sites"][0]["holders"][0]["stack_id"] = 101; // the user stack
    EXPECT_EQ(errorOf(doc),
        "locks[0].sites[0].holders[0].stack_id: stack 101 is a user stack, expected a kernel stack");
    doc = valid;
    doc["locks"][0]["sites"][0]["holders"][0].erase("wait_ns");
    EXPECT_EQ(errorOf(doc), "locks[0].sites[0].holders[0].wait_ns: missing (required field)");
    doc = valid;
    doc["locks"][0]["sites"][0]["holders"][1]["count"] = 0;
    EXPECT_EQ(errorOf(doc),
        "locks[0].sites[0].holders[1].count: must be at least 1 (a holder is listed because waits found it)");
    doc = valid;
    doc["locks"][0]["sites"][0]["holders"][0] = "sem_lock";
    EXPECT_EQ(errorOf(doc), "locks[0].sites[0].holders[0]: expected an object, got a string \"sem_lock\"");
    doc = valid;
    doc["stats"]["holder_not_found"] = -1;
    EXPECT_EQ(errorOf(doc), "stats.holder_not_found: expected a non-negative integer, got -1");
}

TEST(CaptureHolders, NullHoldersReadAsAbsent)
{
    auto doc = toJson(withHolders());
    doc["locks"][0]["sites"][0]["holders"] = nullptr;
    EXPECT_TRUE(fromJson(doc).locks[0].sites[0].holders.empty());
}

} // namespace
} // namespace lockscope
