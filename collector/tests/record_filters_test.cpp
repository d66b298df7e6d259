// SPDX-License-Identifier: GPL-2.0-or-later
// meta.filters as record derives it from its options, and the --lock syntax.
#include <gtest/gtest.h>

#include "kallsyms_text.h"
#include "lockscope/probes/probes.h"
#include "lockscope/record/record_filters.h"
#include "lockscope/record/recorder.h"

using namespace lockscope::record;
using lockscope::probes::Backend;

TEST(RecordFilters, DefaultsSayHowEverythingIsSampled)
{
    RecordOptions o;
    o.all = true;
    o.probe.stack_budget = 1000;
    o.probe.timing_budget = 20000;
    o.probe.syscall_budget = 20000;
    std::map<std::string, std::string> want{
        {"all", "true"},           {"stack_depth", "16"},       {"hold_sample", "off"},
        {"syscall_sample", "off"}, {"stack_budget", "1000"},
        {"timing_budget", "20000"}, {"cpu_frequency_hz", "199"},
        // every wait this long is timed whatever the budget (a power of two over 1.5 ticks of this kernel's HZ)
        {"exact_wait_ns", std::to_string(lockscope::probes::exactWaitNs())},
    };
    EXPECT_EQ(recordFilters(o), want); // syscall timing off unless asked for
    o.probe.syscalls = true;
    want["syscall_sample"] = "1";
    want["syscall_budget"] = "20000";
    EXPECT_EQ(recordFilters(o), want);
}

TEST(RecordFilters, SelectionKeepsTheUsersSpellingAndOrder)
{
    RecordOptions o;
    o.pids = {42, 7};
    o.probe.comm = "semop-multi";
    o.locks = {{"mutex", "spinlock"}, {"0xAbC", "mmap_lock"}};
    o.assemble.stack_contains = {"sem", "ipc"};
    o.cgroup = "/system.slice/x";
    o.duration_s = 2;
    const auto f = recordFilters(o);
    EXPECT_EQ(f.at("pid"), "42,7");
    EXPECT_EQ(f.at("comm"), "semop-multi");
    EXPECT_EQ(f.at("lock_type"), "mutex,spinlock");
    EXPECT_EQ(f.at("lock"), "0xAbC,mmap_lock");
    EXPECT_EQ(f.at("stack_contains"), "sem,ipc");
    EXPECT_EQ(f.at("cgroup"), "/system.slice/x");
    EXPECT_EQ(f.at("duration_s"), std::to_string(2.0));
}

TEST(RecordFilters, OffProbesAndExclusiveKnobs)
{
    RecordOptions o;
    o.probe.hold = Backend::Off;
    o.probe.syscalls = false;
    o.probe.stack_sample = 4;
    o.probe.holder_stacks = true;
    const auto f = recordFilters(o);
    EXPECT_EQ(f.at("hold_sample"), "off");
    EXPECT_EQ(f.at("syscall_sample"), "off");
    EXPECT_FALSE(f.count("syscall_budget"));
    EXPECT_EQ(f.at("stack_sample"), "4");
    EXPECT_FALSE(f.count("stack_budget"));
    EXPECT_FALSE(f.count("timing_budget")) << "holder stacks time every wait";
    EXPECT_EQ(f.at("holder_stacks"), "true");
}

TEST(SelectLocks, KeysNamesAndAddresses)
{
    lockscope::record::AssembleOptions assemble;
    selectLocks({{"rwsem:W"}, {"spinlock@sem_lock", "0x1f", "0XFF"}}, assemble);
    EXPECT_EQ(assemble.lock_types, (std::set<std::string>{"rwsem:W"}));
    EXPECT_EQ(assemble.lock_keys, (std::set<std::string>{"spinlock@sem_lock"}));
    EXPECT_EQ(assemble.lock_addrs, (std::set<uint64_t>{0x1f, 0xff}));
    EXPECT_THROW(selectLocks({{}, {"0x12zz"}}, assemble), RecordError);
}

TEST(SelectLocks, GlobalKeysAndAddressesAreFilteredInTheKernel)
{
    const auto symbols = KernelSymbols::parse(withDataSymbols("ffffffff81000000 T _stext\n"
                                                              "ffffffff81001000 T do_semtimedop\n"
                                                              "ffffffff82000000 D rename_lock\n"));
    EXPECT_EQ(kernelLockFilter({{}, {"rename_lock+0x4", "0x1f"}}, symbols),
              (std::vector<uint64_t>{0xffffffff82000004, 0x1f}));
    EXPECT_EQ(kernelLockFilter({{"spinlock"}, {}}, symbols), std::vector<uint64_t>{}) << "no --lock: no filter";
    // One lock the kernel cannot pick out by address: the assembler filters
    // them all, or the kernel would drop that one's events.
    EXPECT_EQ(kernelLockFilter({{}, {"rename_lock+0x4", "spinlock@sem_lock"}}, symbols), std::vector<uint64_t>{});
    EXPECT_EQ(kernelLockFilter({{}, {"rename_lock"}}, symbols), std::vector<uint64_t>{})
        << "a bare name also names the locks inside the variable";
    for (const char* odd : {"do_semtimedop+0x4", "missing+0x4", "rename_lock+0x", "rename_lock+0x4z", "+0x4", "rename_lock+0x-4",
                            "rename_lock+0x 4"})
        EXPECT_EQ(kernelLockFilter({{}, {odd}}, symbols), std::vector<uint64_t>{}) << odd;
    const auto noData = KernelSymbols::parse("ffffffff81000000 T _stext\nffffffff82000000 D rename_lock\n");
    EXPECT_EQ(kernelLockFilter({{}, {"rename_lock+0x4"}}, noData), std::vector<uint64_t>{});
}
