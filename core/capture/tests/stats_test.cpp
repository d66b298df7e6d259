// SPDX-License-Identifier: GPL-2.0-or-later
#include <gtest/gtest.h>

#include "lockscope/capture/capture.h"

using lockscope::Stats;

// Run sets are pooled with +=: every counter must add, none may be left at one side's value.
TEST(CaptureStats, PlusEqualsAddsEveryCounter)
{
    Stats a{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23};
    const Stats b{100, 200, 300, 400, 500, 600, 700, 800, 900, 1000, 1100, 1200, 1300, 1400, 1500, 1600, 1700, 1800,
                  1900, 2000, 2100, 2200, 2300};
    a += b;
    EXPECT_EQ(a, (Stats{101, 202, 303, 404, 505, 606, 707, 808, 909, 1010, 1111, 1212, 1313, 1414, 1515, 1616, 1717,
                        1818, 1919, 2020, 2121, 2222, 2323}));
    EXPECT_EQ(a.hold_races, 1212u);
    EXPECT_EQ(a.syscalls_untimed, 1414u);
    EXPECT_EQ(a.cpu_unstacked, 1515u);
    EXPECT_EQ(a.owner_stacks_unsampled, 1616u);
    EXPECT_EQ(a.stale_holds, 1717u);
    EXPECT_EQ(a.bpf_frames, 1818u);
    EXPECT_EQ(a.map_busy, 1919u);
    EXPECT_EQ(a.untimed_unplaced, 2020u);
    EXPECT_EQ(a.stack_collisions, 2121u);
    EXPECT_EQ(a.stacks_nested, 2222u);
    EXPECT_EQ(a.stacks_spilled, 2323u);
}
