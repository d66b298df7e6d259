// SPDX-License-Identifier: GPL-2.0-or-later
// Checks on what the lab.guest_session fixture brought back from a stock
// Debian kernel booted under qemu. Missing results are failures: the fixture
// either ran or the boot failed (and printed why).
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "lockscope/lab/guest.h"

namespace fs = std::filesystem;
using namespace lockscope::lab;

namespace {

const fs::path kSession = LAB_SESSION_DIR;

std::string slurp(const fs::path& p)
{
    std::ifstream in(p, std::ios::binary);
    std::ostringstream s;
    s << in.rdbuf();
    return s.str();
}

std::map<std::string, std::string> facts()
{
    return parseKeyValues(slurp(kSession / "facts.log"));
}

// The {"lockscope_result": {...}} line a workload printed.
nlohmann::json workloadResult(const std::string& log)
{
    auto at = log.find("{\"lockscope_result\"");
    if (at == std::string::npos)
        return {};
    auto end = log.find('\n', at);
    return nlohmann::json::parse(log.substr(at, end == std::string::npos ? std::string::npos : end - at))
        .at("lockscope_result");
}

} // namespace

TEST(KernelGuest, BootsAStockKernelWithBtf)
{
    ASSERT_TRUE(fs::exists(kSession / "facts.log")) << "the guest session brought back no facts: see its output";
    auto f = facts();
    EXPECT_EQ(f["release"].rfind("6.1.", 0), 0u) << "release " << f["release"];
    EXPECT_EQ(f["machine"], "x86_64");
    EXPECT_EQ(f["cpus"], "2");
    EXPECT_EQ(f["btf"], "yes") << "Debian kernels carry /sys/kernel/btf/vmlinux";
    EXPECT_EQ(f["tp_contention"], "yes") << "lock:contention_begin tracepoint missing";
    EXPECT_EQ(f["kprobes"], "yes");
}

TEST(KernelGuest, ProbeTargetsExistInTheGuestKallsyms)
{
    auto f = facts();
    ASSERT_FALSE(f.empty());
    for (const char* s : {"_raw_spin_lock", "_raw_spin_unlock", "__lock_timer", "do_semtimedop"})
        EXPECT_EQ(f[std::string("sym.") + s], "yes") << s << " not in the guest's kallsyms";
}

TEST(KernelGuest, BinaryFilesSurviveTheSerialChannel)
{
    auto received = slurp(kSession / "transfer.bin");
    auto original = slurp(LAB_WORKLOAD);
    ASSERT_FALSE(original.empty());
    EXPECT_EQ(received.size(), original.size());
    EXPECT_TRUE(received == original) << "transfer.bin differs from " << LAB_WORKLOAD;
}

TEST(KernelGuest, WorkloadRunsWithExactCounts)
{
    auto r = workloadResult(slurp(kSession / "workload_timers.log"));
    ASSERT_TRUE(r.is_object()) << "no lockscope_result line in workload_timers.log";
    EXPECT_EQ(r["syscalls"].get<int>(), 10000);
    EXPECT_EQ(r["errors"].get<int>(), 0);
}
