// SPDX-License-Identifier: GPL-2.0-or-later
#include "lockscope/util/interned_string.h"

#include <algorithm>
#include <string>
#include <thread>
#include <unordered_set>
#include <vector>

#include <gtest/gtest.h>

using lockscope::InternedString;

TEST(InternedString, EqualStringsAreOneObject)
{
    const std::string built = std::string("_raw_spin") + "_lock";
    const InternedString a("_raw_spin_lock");
    const InternedString b(built);
    EXPECT_EQ(a.id(), b.id());
    EXPECT_EQ(a, b);
    EXPECT_NE(a, InternedString("_raw_spin_unlock"));
    EXPECT_EQ(a, "_raw_spin_lock");
    EXPECT_EQ(a, built);
    EXPECT_EQ(a.str(), built);
}

TEST(InternedString, EmptyIsTheDefault)
{
    const InternedString none;
    EXPECT_TRUE(none.empty());
    EXPECT_EQ(none, InternedString(""));
    EXPECT_EQ(none.id(), InternedString(std::string()).id());
    EXPECT_EQ(none.str(), "");
}

TEST(InternedString, OrdersByContentNotByAddress)
{
    // Interned in the reverse of their order, so address order would differ.
    std::vector<InternedString> names { "zap_pte_range", "mutex_lock", "__x64_sys_semtimedop", "mutex_lock" };
    std::sort(names.begin(), names.end());
    EXPECT_EQ(names[0], "__x64_sys_semtimedop");
    EXPECT_EQ(names[1], "mutex_lock");
    EXPECT_EQ(names[2], "mutex_lock");
    EXPECT_EQ(names[3], "zap_pte_range");
    EXPECT_LT(InternedString("a"), std::string("b"));
    EXPECT_GT(InternedString("b"), "a");
}

TEST(InternedString, ThreadsInterningTheSameNamesGetTheSameObjects)
{
    constexpr int kNames = 5000;
    auto internAll = [](std::vector<const void*>& ids) {
        for (int i = 0; i < kNames; ++i)
            ids.push_back(InternedString("concurrent_fn_" + std::to_string(i)).id());
    };
    std::vector<const void*> a, b;
    std::thread t([&] { internAll(a); });
    internAll(b);
    t.join();
    EXPECT_EQ(a, b);
    EXPECT_EQ(std::unordered_set<const void*>(a.begin(), a.end()).size(), size_t{kNames});
}
