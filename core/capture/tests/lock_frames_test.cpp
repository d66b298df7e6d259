// SPDX-License-Identifier: GPL-2.0-or-later
#include <gtest/gtest.h>

#include "lockscope/capture/lock_frames.h"

using namespace lockscope;

TEST(LockFrames, SpinlockAndSlowPaths)
{
    for (auto n : {"_raw_spin_lock", "_raw_spin_lock_irqsave", "_raw_spin_lock_bh", "_raw_read_lock",
                   "_raw_write_lock_irq", "queued_spin_lock_slowpath", "native_queued_spin_lock_slowpath",
                   "__pv_queued_spin_lock_slowpath", "queued_write_lock_slowpath", "do_raw_spin_lock",
                   "__lock_text_start"})
        EXPECT_TRUE(isLockFunction(n)) << n;
}

TEST(LockFrames, SleepingLocksIncludingCompilerClones)
{
    for (auto n : {"mutex_lock", "__mutex_lock.constprop.0", "__mutex_lock_slowpath",
                   "mutex_lock_killable", "down_read", "down_write_killable", "rwsem_down_write_slowpath",
                   "rwsem_down_read_slowpath.isra.0", "__down_common", "down_timeout", "percpu_down_write",
                   "__percpu_down_read", "percpu_rwsem_wait", "rt_mutex_slowlock", "rtlock_slowlock_locked"})
        EXPECT_TRUE(isLockFunction(n)) << n;
}

TEST(LockFrames, OptimisticSpinningAndOldRwsemSlowPaths)
{
    for (auto n : {"osq_lock", "mutex_spin_on_owner", "__rwsem_down_write_failed_common"})
        EXPECT_TRUE(isLockFunction(n)) << n;
}

// The scheduler is not lock machinery: a caller that sleeps is named as
// itself, and schedule in a CPU profile is not spinning.
TEST(LockFrames, CallersAreNotLockFunctions)
{
    for (auto n : {"do_semtimedop", "sem_lock", "ipc_lock_object", "__lock_timer", "d_alloc_parallel",
                   "downgrade_write_caller", "download", "mutex_unlocked_helper", "lock_timer_base",
                   "schedule", "__schedule", "schedule_preempt_disabled", "ext4_lookup"})
        EXPECT_FALSE(isLockFunction(n)) << n;
}

// What reports and importers skip to name a lock's caller: both lists.
TEST(LockFrames, InternalFramesAreLockOrTracing)
{
    EXPECT_TRUE(isLockInternalFrame("__traceiter_contention_begin"));
    EXPECT_TRUE(isLockInternalFrame("trace_contention_begin"));
    EXPECT_TRUE(isLockInternalFrame("_raw_spin_lock_irqsave"));
    EXPECT_FALSE(isLockInternalFrame("do_semtimedop"));
    EXPECT_FALSE(isLockInternalFrame("schedule"));
}

TEST(LockFrames, TracingGlue)
{
    for (auto n : {"bpf_prog_6deef7357e7b4530_contention_begin", "bpf_trace_run2",
                   "__traceiter_contention_begin", "__bpf_trace_contention_begin", "bpf_trampoline_6442"})
        EXPECT_TRUE(isTracingFunction(n)) << n;
    EXPECT_FALSE(isTracingFunction("bpf_map_update_elem"));
}

TEST(LockFrames, SpinAndIdleLeaves)
{
    EXPECT_TRUE(isSpinFunction("native_queued_spin_lock_slowpath"));
    EXPECT_TRUE(isSpinFunction("_raw_spin_lock_irqsave"));
    EXPECT_TRUE(isSpinFunction("kvm_wait"));
    EXPECT_FALSE(isSpinFunction("_raw_spin_unlock_irqrestore"));
    EXPECT_FALSE(isSpinFunction("mutex_lock"));
    EXPECT_TRUE(isIdleFunction("pv_native_safe_halt"));
    EXPECT_TRUE(isIdleFunction("intel_idle_irq"));
    EXPECT_FALSE(isIdleFunction("do_semtimedop"));
}

TEST(LockFrames, BaseName)
{
    EXPECT_EQ(baseFunctionName("__mutex_lock.constprop.0"), "__mutex_lock");
    EXPECT_EQ(baseFunctionName("foo.cold"), "foo");
    EXPECT_EQ(baseFunctionName("plain"), "plain");
    EXPECT_EQ(baseFunctionName(".weird"), ".weird");
}

namespace {
Frame named(const char* fn, uint64_t off, uint64_t addr, const char* module = "")
{
    return Frame{fn, off, module, addr};
}
} // namespace

// A stack of the committed seed pair (fentry/fexit on __x64_sys_timer_gettime
// and __lock_timer): each function runs its body from its trampoline, whose
// caller is the function's patched first instruction.
TEST(LockFrames, BpfTrampolinesAndTheFunctionsPatchedEntryGo)
{
    std::vector<Frame> f{named("__lock_timer", 36, 0xffffffff810a49c4),
                         Frame{"", 0, "", 0xffffffffa023b076},
                         named("__lock_timer", 5, 0xffffffff810a49a5),
                         named("__x64_sys_timer_gettime", 69, 0xffffffff810a55db),
                         Frame{"", 0, "", 0xffffffffa022d06e},
                         named("__x64_sys_timer_gettime", 5, 0xffffffff810a559b),
                         named("do_syscall_64", 57, 0xffffffff8131f758)};
    EXPECT_EQ(dropBpfFrames(f), 2u);
    ASSERT_EQ(f.size(), 3u);
    EXPECT_EQ(f[0].function, "__lock_timer");
    EXPECT_EQ(f[0].offset, 36u);
    EXPECT_EQ(f[1].function, "__x64_sys_timer_gettime");
    EXPECT_EQ(f[1].offset, 69u);
    EXPECT_EQ(f[2].function, "do_syscall_64");
}

TEST(LockFrames, NamedBpfCodeGoesAndRealRecursionStays)
{
    std::vector<Frame> f{named("queued_spin_lock_slowpath", 0x20, 0xffffffff81000000),
                         named("bpf_prog_6deef7357e7b4530_wait_begin", 0x40, 0xffffffffa0001000, "bpf"),
                         named("bpf_trampoline_6442501823", 0x50, 0xffffffffa0002000, "bpf"),
                         named("lockscope_program", 0x10, 0xffffffffa0003000, "bpf"),
                         named("f", 0x30, 0xffffffff81000100),
                         named("f", 0x8, 0xffffffff81000080),
                         named("g", 0x8, 0xffffffff81000200)};
    EXPECT_EQ(dropBpfFrames(f), 3u);
    ASSERT_EQ(f.size(), 4u) << "f called f without a trampoline between: both stay";
    EXPECT_EQ(f[1].function, "f");
    EXPECT_EQ(f[2].function, "f");
    // An unresolved address outside the module area (a user address, core
    // kernel text kallsyms lacked) is not BPF.
    EXPECT_FALSE(isBpfFrame(Frame{"", 0, "", 0xffffffff81234567}));
    EXPECT_FALSE(isBpfFrame(Frame{"", 0, "", 0x7f0000001000}));
    EXPECT_FALSE(isBpfFrame(Frame{"", 0, "", std::nullopt}));
    EXPECT_TRUE(isBpfFrame(Frame{"", 0, "", 0xffffffffc0a00000}));
}

TEST(LockFrames, CapturesLockStacksLoseBpfFramesCpuStacksKeepThem)
{
    Capture c;
    c.stacks = {Stack{1, StackKind::Kernel, {named("f", 0x30, 1), Frame{"", 0, "", 0xffffffffa0000010}}},
                Stack{2, StackKind::Kernel, {named("bpf_prog_x", 0, 0xffffffffa0000020, "bpf"), named("g", 0, 2)}},
                Stack{3, StackKind::Kernel, {Frame{"", 0, "", 0xffffffffa0000030}}}};
    Lock l;
    l.sites.resize(2);
    l.sites[0].stack_id = 1;
    l.sites[1].stack_id = 3;
    c.locks.push_back(l);
    c.cpu.stacks.push_back(StackCount{2, 5});
    dropBpfFrames(c);
    EXPECT_EQ(c.stacks[0].frames.size(), 1u);
    EXPECT_EQ(c.stacks[1].frames.size(), 2u) << "a CPU sample in a BPF program is CPU time spent there";
    ASSERT_EQ(c.stacks[2].frames.size(), 1u);
    EXPECT_EQ(c.stacks[2].frames[0].function, kNoStackFrame);
    EXPECT_EQ(c.stats.bpf_frames, 2u);
}
