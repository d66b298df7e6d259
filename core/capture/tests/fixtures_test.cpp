// SPDX-License-Identifier: GPL-2.0-or-later
#include <gtest/gtest.h>

#include <string>

#include "lockscope/capture/io.h"
#include "sample_capture.h"

namespace lockscope {
namespace {

const std::string kFixtures = LOCKSCOPE_CAPTURE_FIXTURES;

TEST(CaptureFixtures, PairIsWhatTheGeneratorWrites)
{
    // If this fails after a deliberate change of the generator or the format,
    // regenerate: lockscope_capture_fixturegen core/capture/tests/fixtures
    EXPECT_EQ(readCapture(kFixtures + "/baseline.lockscope.json"),
        testing::makeSemopCapture(testing::SemopScenario::Baseline));
    EXPECT_EQ(readCapture(kFixtures + "/patched.lockscope.json"),
        testing::makeSemopCapture(testing::SemopScenario::Patched));
}

TEST(CaptureFixtures, PairTellsTheSemLockStory)
{
    const Capture base = readCapture(kFixtures + "/baseline.lockscope.json");
    const Capture fixed = readCapture(kFixtures + "/patched.lockscope.json");
    EXPECT_EQ(base.meta.label, "baseline");
    EXPECT_EQ(fixed.meta.label, "patched");
    EXPECT_NE(base.meta.kernel_build_id, fixed.meta.kernel_build_id);
    // Most of the CPU spinning before, a small share after.
    EXPECT_GT(base.cpu.lockShare(), 0.5);
    EXPECT_LT(fixed.cpu.lockShare(), 0.10);
    const auto find = [](const Capture& c, const std::string& key) -> const Lock& {
        for (const auto& l : c.locks)
            if (l.key == key)
                return l;
        throw std::runtime_error("no lock " + key);
    };
    const Lock& before = find(base, "spinlock@sem_lock");
    const Lock& after = find(fixed, "spinlock@sem_lock");
    EXPECT_GT(before.wait.total(), 50 * after.wait.total());
    EXPECT_GT(before.wait.percentile(50), 4 * after.wait.percentile(50));
    // semop callers wait far less at the tail too; semctl still takes the array lock.
    EXPECT_GT(before.sites.at(0).wait.percentile(99), 4 * after.sites.at(0).wait.percentile(99));
    // Every lock of one build is matched by key in the other.
    for (const auto& l : base.locks)
        EXPECT_NO_THROW(find(fixed, l.key)) << l.key;
    EXPECT_GT(fixed.workload.results.at("ops_per_sec").get<double>(),
        base.workload.results.at("ops_per_sec").get<double>());
}

} // namespace
} // namespace lockscope
