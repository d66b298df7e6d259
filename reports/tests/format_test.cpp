// SPDX-License-Identifier: GPL-2.0-or-later
// The format API's figures as the reports print them (kPlain, printf's
// bytes) and as the GUI shows them (kDisplay); the lock columns' table and
// its cells where nothing was timed.
#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "lockscope/reports/format.h"
#include "lockscope/reports/lock_columns.h"

namespace lockscope::reports {
namespace {

TEST(Format, PercentValueIsAFigureAlreadyInPercent)
{
    EXPECT_EQ(fmt::percentValue(12.5), "12.50%");
    EXPECT_EQ(fmt::percentValue(0.0042, 3), "0.004%");
    EXPECT_EQ(fmt::percentValue(-1234.5, 1, fmt::kDisplay), "\u22121\u202f234.5 %");
    // A fraction goes through the same figure; only the fraction checks finiteness.
    EXPECT_EQ(fmt::percent(0.125, 1), fmt::percentValue(12.5, 1));
    EXPECT_EQ(fmt::percent(std::nan("")), "-");
}

TEST(Format, SignificantKeepsPrintfsDigits)
{
    EXPECT_EQ(fmt::significant(0.04234, 2), "0.042");
    EXPECT_EQ(fmt::significant(1.234e-5, 2), "1.2e-05");
    EXPECT_EQ(fmt::significant(1234.0, 3), "1.23e+03");
    EXPECT_EQ(fmt::significant(-0.5, 2, fmt::kDisplay), "\u22120.5");
}

TEST(LockColumns, NothingTimedIsNoneNotZero)
{
    Lock l;
    l.key = "mutex@f";
    l.type = "mutex";
    l.wait.add(1000, 3);
    const LockFigures f = lockFigures(l);
    for (LockColumn c : {LockColumn::TotalHold, LockColumn::AvgHold, LockColumn::MaxHold, LockColumn::P99Acquire}) {
        EXPECT_EQ(lockColumn(c).cell(f, fmt::kPlain), "-") << lockColumn(c).header;
        EXPECT_EQ(lockColumn(c).cell(f, fmt::kDisplay), "\u2013") << lockColumn(c).header;
        EXPECT_EQ(lockColumn(c).value(f), 0u) << lockColumn(c).header;
    }
    EXPECT_EQ(lockColumn(LockColumn::Holds).cell(f, fmt::kPlain), "0");

    l.hold.add(1500, 2000);
    l.acquire.add(2000, 5);
    const LockFigures held = lockFigures(l);
    EXPECT_EQ(lockColumn(LockColumn::Holds).cell(held, fmt::kPlain), "2000");
    EXPECT_EQ(lockColumn(LockColumn::Holds).cell(held, fmt::kDisplay), "2\u202f000");
    EXPECT_EQ(lockColumn(LockColumn::TotalHold).cell(held, fmt::kPlain), "3.00 ms");
    EXPECT_EQ(lockColumn(LockColumn::MaxHold).cell(held, fmt::kPlain), "1.50 us");
    EXPECT_EQ(lockColumn(LockColumn::Acquires).cell(held, fmt::kPlain), "5");
    EXPECT_EQ(lockColumn(LockColumn::P99Acquire).cell(held, fmt::kPlain), "2.00 us");
    EXPECT_EQ(lockColumn(LockColumn::P99Acquire).value(held), 2000u);
}

// The table is indexed by LockColumn: every descriptor sits at its own id.
TEST(LockColumns, EveryColumnIsAtItsId)
{
    const auto all = lockColumns();
    ASSERT_EQ(all.size(), size_t(LockColumn::Caller) + 1);
    for (size_t i = 0; i < all.size(); ++i)
        EXPECT_EQ(size_t(all[i].id), i) << all[i].header;
}

} // namespace
} // namespace lockscope::reports
