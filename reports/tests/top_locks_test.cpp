// SPDX-License-Identifier: GPL-2.0-or-later
#include <gtest/gtest.h>

#include <string>

#include "lockscope/reports/render.h"

namespace lockscope::reports {
namespace {

Lock lockWaiting(const std::string& key, uint64_t waits, uint64_t each_ns)
{
    Lock l;
    l.key = key;
    l.type = "spinlock";
    l.wait.add(each_ns, waits);
    return l;
}

size_t lineCount(const std::string& s)
{
    size_t n = 0;
    for (char c : s)
        n += c == '\n';
    return n;
}

TEST(TopLocksTable, RowsGoByTotalWaitAndStopAtTheLimit)
{
    Capture c;
    c.locks.push_back(lockWaiting("spinlock@small", 10, 1000));     // 10 us in all
    c.locks.push_back(lockWaiting("spinlock@big", 2, 1000000));     // 2 ms in all
    c.locks.push_back(lockWaiting("spinlock@middle", 100, 1000));   // 100 us in all
    Lock holdOnly;
    holdOnly.key = "spinlock@held";
    holdOnly.hold.add(5000);
    c.locks.push_back(holdOnly);

    const std::string all = topLocksTable(c);
    EXPECT_EQ(lineCount(all), 4u) << all; // header + the three locks that waited
    EXPECT_EQ(all.find("spinlock@held"), std::string::npos);
    const size_t big = all.find("spinlock@big"), middle = all.find("spinlock@middle"),
                 small = all.find("spinlock@small");
    ASSERT_NE(big, std::string::npos);
    EXPECT_LT(big, middle);
    EXPECT_LT(middle, small);

    const std::string two = topLocksTable(c, 2);
    EXPECT_EQ(lineCount(two), 3u) << two;
    EXPECT_EQ(two.find("spinlock@small"), std::string::npos);
}

TEST(TopLocksTable, LongKeysAreCutAndNoWaitsSaySo)
{
    Capture c;
    const std::string longKey = "spinlock@" + std::string(80, 'x');
    c.locks.push_back(lockWaiting(longKey, 1, 1000));
    const std::string t = topLocksTable(c);
    EXPECT_EQ(t.find(longKey), std::string::npos);
    EXPECT_NE(t.find(longKey.substr(0, 45) + "..."), std::string::npos) << t;

    EXPECT_NE(topLocksTable(Capture {}).find("(no contended locks seen)"), std::string::npos);
}

} // namespace
} // namespace lockscope::reports
