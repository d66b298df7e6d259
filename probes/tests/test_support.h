// SPDX-License-Identifier: GPL-2.0-or-later
#pragma once

#include <unistd.h>

#include <gtest/gtest.h>

// BPF tests need root; without it they skip and say why.
#define LOCKSCOPE_REQUIRE_ROOT()                                                                             \
    do {                                                                                                     \
        if (geteuid() != 0)                                                                                  \
            GTEST_SKIP() << "skipped: loading BPF programs needs root (CI runs these tests as root)";        \
    } while (0)
