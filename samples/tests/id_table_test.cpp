// SPDX-License-Identifier: GPL-2.0-or-later
#include <gtest/gtest.h>

#include <random>

#include "lockscope/scaling/id_table.h"
#include "lockscope/scaling/runner.h"

using namespace lockscope::scaling;

TEST(IdTable, HashAndLinearTablesAgreeOnEveryOperation)
{
    auto linear = makeIdTable(Variant::Before);
    auto hash = makeIdTable(Variant::After);
    std::mt19937 rng(42);
    for (int i = 0; i < 20000; ++i) {
        auto key = static_cast<int32_t>(rng() % 500);
        switch (rng() % 3) {
        case 0:
            ASSERT_EQ(linear->getOrCreate(key), hash->getOrCreate(key)) << "op " << i;
            break;
        case 1:
            ASSERT_EQ(linear->find(key), hash->find(key)) << "op " << i;
            break;
        default: {
            auto id = linear->find(key);
            ASSERT_EQ(id, hash->find(key));
            if (id) {
                ASSERT_TRUE(linear->remove(*id));
                ASSERT_TRUE(hash->remove(*id));
            }
        }
        }
    }
    EXPECT_EQ(linear->contents(), hash->contents());
    EXPECT_FALSE(linear->contents().empty());
}

TEST(IdTable, RemovedIdsAreReusedAndUnknownIdsRejected)
{
    for (Variant v : {Variant::Before, Variant::After}) {
        auto t = makeIdTable(v);
        int a = t->getOrCreate(10), b = t->getOrCreate(20);
        EXPECT_NE(a, b);
        EXPECT_EQ(t->getOrCreate(10), a);
        EXPECT_TRUE(t->remove(a));
        EXPECT_FALSE(t->remove(a));
        EXPECT_FALSE(t->remove(12345));
        EXPECT_FALSE(t->find(10).has_value());
        EXPECT_EQ(t->getOrCreate(30), a);  // lowest free id first, as idr does
        EXPECT_EQ(t->find(30), a);
    }
}

TEST(IdTable, ConcurrentChurnKeepsEveryKeyExactlyOnce)
{
    for (Variant v : {Variant::Before, Variant::After}) {
        PointResult r = runOps(*findPair("ipc-key-lookup"), v, 4, 3000, true);
        EXPECT_EQ(r.violation, "") << variantName(v);
        ASSERT_EQ(r.locks.size(), 1u);
        EXPECT_EQ(r.locks[0].type, "rwsem");
        EXPECT_GE(r.locks[0].wait.count(), r.ops);
    }
}
