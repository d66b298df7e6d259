// SPDX-License-Identifier: GPL-2.0-or-later
// The per-lock series: bounded, never going backwards, adding up to the total.
#include <gtest/gtest.h>

#include <map>

#include "lockscope/agent/lock_series.h"

namespace lockscope::agent {
namespace {

Lock lockWith(const std::string& key, uint64_t waits, uint64_t ns)
{
    Lock l;
    l.key = key;
    l.type = "spinlock";
    for (uint64_t i = 0; i < waits; ++i)
        l.wait.add(ns);
    return l;
}

Capture slice(std::initializer_list<Lock> locks)
{
    Capture c;
    c.locks = locks;
    return c;
}

// Every series' counts by name ("other" included).
std::map<std::string, uint64_t> counts(const LockSeries& s)
{
    std::map<std::string, uint64_t> out;
    for (const LockSeriesEntry* e : s.shown())
        out[e->key] = e->figures.contentions;
    out["other"] = s.other().contentions;
    return out;
}

TEST(LockSeries, TopLocksOwnSeriesTheRestOther)
{
    LockSeries s(2);
    s.add(slice({lockWith("a", 10, 1000), lockWith("b", 5, 1000), lockWith("c", 1, 1000)}));
    const auto n = counts(s);
    ASSERT_EQ(n.size(), 3u) << "two locks and other";
    // Their first window: nobody was shown yet, so it all went to other.
    EXPECT_EQ(n.at("other"), 16u);
    s.add(slice({lockWith("a", 10, 1000), lockWith("c", 1, 1000)}));
    const auto m = counts(s);
    EXPECT_EQ(m.at("a"), 10u);
    EXPECT_EQ(m.at("b"), 0u);
    EXPECT_EQ(m.at("other"), 17u);
}

TEST(LockSeries, CountersNeverGoBackwardsAsLocksMoveInAndOut)
{
    LockSeries s(1);
    std::map<std::string, uint64_t> last;
    uint64_t total = 0;
    for (int round = 0; round < 20; ++round) {
        // The hot lock alternates, so the top-1 changes hands.
        const bool aHot = (round / 3) % 2 == 0;
        s.add(slice({lockWith("a", aHot ? 30 : 1, 1000 * (aHot ? 50 : 1)), lockWith("b", aHot ? 1 : 40, 100000)}));
        total += aHot ? 31u : 41u;
        uint64_t sum = 0;
        for (const auto& [name, n] : counts(s)) {
            EXPECT_GE(n, last[name]) << name << " went backwards in round " << round;
            last[name] = n;
            sum += n;
        }
        EXPECT_LE(counts(s).size(), 2u) << "top 1 plus other";
        // Shown series plus other add up to every wait, except a lock's
        // figures kept while it is not shown.
        EXPECT_LE(sum, total);
    }
}

TEST(LockSeries, RankingMemoryIsBounded)
{
    LockSeries s(1, 150);
    for (int i = 0; i < 1000; ++i)
        s.add(slice({lockWith("lock" + std::to_string(i), 1, uint64_t(1000 + i))}));
    EXPECT_GT(s.locksForgotten(), 800u);
    EXPECT_EQ(s.shown().size(), 1u);
    EXPECT_EQ(s.other().contentions + s.shown()[0]->figures.contentions, 1000u)
        << "every wait counted once, in other or in the shown lock";
}

} // namespace
} // namespace lockscope::agent
