// SPDX-License-Identifier: GPL-2.0-or-later
// CPU sampling once its stack map is full: kernel-mode samples are counted by
// the function they interrupted instead of dropped, so the lock share stays
// right. cpu_stack_keys is made tiny so the map fills at once.
#include <algorithm>
#include <fstream>
#include <sstream>
#include <string>

#include <unistd.h>

#include <gtest/gtest.h>

#include "contention_gen.h"
#include "lockscope/probes/probes.h"
#include "test_support.h"

namespace lockscope::probes {
namespace {

uint64_t kallsymsAddress(const std::string& name)
{
    std::ifstream in("/proc/kallsyms");
    std::string line;
    while (std::getline(in, line)) {
        std::istringstream fields(line);
        std::string addr, type, sym;
        if (fields >> addr >> type >> sym && sym == name)
            return std::stoull(addr, nullptr, 16);
    }
    return 0;
}

uint64_t unstackedAt(const Snapshot& snap, uint64_t function)
{
    uint64_t n = 0;
    for (const CpuUnstackedRecord& r : snap.cpu_unstacked)
        if (r.function == function)
            n += r.count;
    return n;
}

TEST(CpuOverflow, AFullStackMapCountsSamplesByTheirFunction)
{
    LOCKSCOPE_REQUIRE_ROOT();
    const uint64_t stext = kallsymsAddress("_stext"), etext = kallsymsAddress("_etext");
    if (stext == 0 || etext <= stext)
        GTEST_SKIP() << "skipped: /proc/kallsyms hides _stext/_etext (kptr_restrict)";
    Options o;
    o.wait = Backend::Off;
    o.hold = Backend::Off;
    o.functions = Backend::Off;
    o.syscalls = false;
    o.tgids = { static_cast<uint32_t>(getpid()) };
    o.cpu_frequency_hz = 997;
    o.cpu_stack_keys = 4;
    // The whole core kernel text, and a range no sample can fall in, given unsorted.
    o.cpu_leaf_functions = { { stext, etext }, { 0x1000, 0x2000 } };
    auto s = Session::open(o);

    Snapshot snap;
    for (int round = 0; round < 40 && unstackedAt(snap, stext) < 50; ++round) {
        test::semopContention(2, 20000);
        snap = s->snapshot();
    }
    s->detach();
    snap = s->snapshot(); // quiet now: the counters and the maps agree

    ASSERT_GE(unstackedAt(snap, stext), 50u) << "kernel-mode samples beyond the full map were not counted";
    EXPECT_EQ(unstackedAt(snap, 0x1000), 0u) << "a sample outside the range was counted in it";
    EXPECT_LE(snap.cpu.size(), 4u);
    EXPECT_EQ(snap.stats.map_full, 0u) << "a sample was dropped on the full map";
    uint64_t counted = 0;
    for (const CpuRecord& r : snap.cpu)
        counted += r.count;
    uint64_t unstacked = 0;
    for (const CpuUnstackedRecord& r : snap.cpu_unstacked)
        unstacked += r.count;
    EXPECT_EQ(unstacked, snap.stats.cpu_unstacked);
    EXPECT_EQ(counted + unstacked, snap.cpu_samples) << "every sample is counted exactly once";
}

} // namespace
} // namespace lockscope::probes
