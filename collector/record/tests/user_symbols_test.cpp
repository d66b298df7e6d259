// SPDX-License-Identifier: GPL-2.0-or-later
#include <gtest/gtest.h>

#include <unistd.h>

#include "lockscope/record/user_symbols.h"

extern "C" __attribute__((noinline, used)) int lockscope_record_test_marker(int x)
{
    asm volatile("" ::: "memory");
    return x * 3 + 1;
}

TEST(UserSymbols, ResolvesOwnFunction)
{
    lockscope::record::UserSymbols syms;
    syms.prepare(getpid());
    auto addr = reinterpret_cast<uint64_t>(&lockscope_record_test_marker);
    auto f = syms.resolve(getpid(), addr + 2);
    EXPECT_EQ(f.function, "lockscope_record_test_marker");
    EXPECT_EQ(f.offset, 2u);
    EXPECT_NE(f.module.find("record_unit_tests"), std::string::npos) << f.module;
    EXPECT_EQ(f.address, addr + 2);
}

TEST(UserSymbols, ResolvesLibcFunction)
{
    lockscope::record::UserSymbols syms;
    auto addr = reinterpret_cast<uint64_t>(&getpid);
    auto f = syms.resolve(getpid(), addr);
    EXPECT_NE(f.function.find("getpid"), std::string::npos) << f.function;
    EXPECT_NE(f.module.find("libc"), std::string::npos) << f.module;
}

TEST(UserSymbols, UnknownAddressIsUnresolvedNotACrash)
{
    lockscope::record::UserSymbols syms;
    auto f = syms.resolve(getpid(), 0x10);
    EXPECT_TRUE(f.function.empty());
    EXPECT_EQ(f.address, 0x10u);
}
