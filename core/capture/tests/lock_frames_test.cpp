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
