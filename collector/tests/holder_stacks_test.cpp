// SPDX-License-Identifier: GPL-2.0-or-later
// `lockscope record --holder-stacks` as a user runs it: refused combinations
// (one line, exit 2), and on the running kernel either real holders (hold
// probe attached) or the visible skip line saying why not, in the capture too.
#include <gtest/gtest.h>

#include <string>
#include <unistd.h>

#include "lockscope/capture/io.h"
#include "run_process.h"
#include "spin_contention.h"

using namespace record_test;

namespace {

const std::string kBin = LOCKSCOPE_BIN;
const std::string kSemop = SEMOP_MULTI_BIN;

const lockscope::ProbeStatus* probe(const lockscope::Capture& c, const std::string& name)
{
    for (const auto& p : c.probes)
        if (p.name == name)
            return &p;
    return nullptr;
}

TEST(RecordHolderStacks, NeedsEveryAcquisitionAndTheHoldProbe)
{
    auto dir = tempDir();
    for (const std::vector<std::string>& extra :
        { std::vector<std::string> { "--hold-sample", "10" }, std::vector<std::string> { "--no-hold" } }) {
        std::vector<std::string> argv { kBin, "record", "--holder-stacks" };
        argv.insert(argv.end(), extra.begin(), extra.end());
        argv.insert(argv.end(), { "--", "true" });
        Exit e = run(argv, dir, "refused");
        EXPECT_EQ(e.code, 2) << extra[0] << ": " << e.err;
        EXPECT_EQ(lineCount(e.err), 1u) << e.err;
        EXPECT_NE(e.err.find("--holder-stacks"), std::string::npos) << e.err;
        EXPECT_NE(e.err.find(extra[0]), std::string::npos) << "the line names what to drop: " << e.err;
    }
}

TEST(RecordHolderStacks, AttachedOrSkippedVisiblyWithTheReason)
{
    if (geteuid() != 0)
        GTEST_SKIP() << "skipped: loading BPF programs needs root (CI runs these as root)";
    auto dir = tempDir();
    const std::string out = dir + "/holders.lockscope.json";
    Exit e = run({ kBin, "record", "--holder-stacks", "--no-cpu", "-o", out, "--", kSemop, "--multi", "--threads",
                     "4", "--sems", "16", "--duration", "1" },
        dir, "holders");
    ASSERT_EQ(e.code, 0) << e.err;
    const lockscope::Capture c = lockscope::readCapture(out);
    const auto* hold = probe(c, "spin_hold");
    const auto* holders = probe(c, "holder_stacks");
    ASSERT_TRUE(hold && holders) << e.err;
    EXPECT_EQ(c.meta.filters.at("holder_stacks"), "true");
    if (hold->attached) {
        // Kernels with fentry or kprobes (the lab's 6.1 guest, where
        // kernel_guest.HolderStacksNameTheSemaphoreHolders checks the holders).
        EXPECT_TRUE(holders->attached) << holders->reason;
        EXPECT_NE(e.err.find("holder_stacks: attached via " + hold->hook), std::string::npos) << e.err;
        return;
    }
    // This kernel refuses fentry and kprobes: one line says so, and the capture says the same.
    const std::string prefix = "needs the hold probe (fentry/kprobe), which this kernel refuses: ";
    EXPECT_FALSE(holders->attached);
    EXPECT_EQ(holders->reason, prefix + hold->reason);
    EXPECT_NE(e.err.find("holder_stacks: skipped: " + prefix), std::string::npos) << e.err;
    EXPECT_NE(e.err.find("spin_hold: skipped: "), std::string::npos) << e.err;
    for (const auto& l : c.locks)
        for (const auto& s : l.sites)
            EXPECT_TRUE(s.holders.empty()) << l.key;
    EXPECT_EQ(c.stats.holder_not_found, 0u) << "no scan ran, so nothing was 'not found'";
    std::fprintf(stderr, "holder stacks on this kernel: skipped: %s\n", holders->reason.c_str());
    LOCKSCOPE_REQUIRE_SPIN_WAITS();
    EXPECT_FALSE(c.locks.empty()) << "the wait probe still records";
}

} // namespace
