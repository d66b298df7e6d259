// SPDX-License-Identifier: GPL-2.0-or-later
#include <gtest/gtest.h>

#include "lockscope/probes/probes.h"
#include "lockscope_bpf.h"

using lockscope::probes::lockTypeName;

TEST(LockTypeName, MatchesKernelCallSiteFlags)
{
    EXPECT_EQ(lockTypeName(LS_LCB_F_SPIN), "spinlock");
    EXPECT_EQ(lockTypeName(LS_LCB_F_SPIN | LS_LCB_F_READ), "rwlock:R");
    EXPECT_EQ(lockTypeName(LS_LCB_F_SPIN | LS_LCB_F_WRITE), "rwlock:W");
    EXPECT_EQ(lockTypeName(LS_LCB_F_MUTEX), "mutex");
    EXPECT_EQ(lockTypeName(LS_LCB_F_MUTEX | LS_LCB_F_SPIN), "mutex:spin"); // acquired while spinning
    EXPECT_EQ(lockTypeName(LS_LCB_F_READ), "rwsem:R");
    EXPECT_EQ(lockTypeName(LS_LCB_F_WRITE), "rwsem:W");
    EXPECT_EQ(lockTypeName(LS_LCB_F_RT), "rtmutex");
    EXPECT_EQ(lockTypeName(LS_LCB_F_RT | LS_LCB_F_READ), "rtmutex:R");
    EXPECT_EQ(lockTypeName(LS_LCB_F_PERCPU | LS_LCB_F_WRITE), "percpu-rwsem:W");
    EXPECT_EQ(lockTypeName(0), "semaphore");
    EXPECT_EQ(lockTypeName(1u << 9), "unknown(0x200)");
}
