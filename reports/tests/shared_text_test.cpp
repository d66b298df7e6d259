// SPDX-License-Identifier: GPL-2.0-or-later
#include <sstream>

#include <gtest/gtest.h>

#include "lockscope/reports/compare.h"
#include "lockscope/reports/shared_text.h"

using namespace lockscope::reports;

// A judgement's reason is stored once however many figures carry it.
TEST(SharedText, CopiesShareOneStringAndCompareByText)
{
    const SharedText a("one run on a side");
    const SharedText b = a; // NOLINT(performance-unnecessary-copy-initialization): the copy is the point
    EXPECT_EQ(&a.str(), &b.str());
    EXPECT_EQ(a, SharedText("one run on a side")) << "equal texts are equal whoever made them";
    EXPECT_EQ(a, std::string_view("one run on a side"));
    EXPECT_FALSE(a == SharedText("another"));
    std::ostringstream os;
    os << a;
    EXPECT_EQ(os.str(), "one run on a side");

    const SharedText none, made(std::string {});
    EXPECT_TRUE(none.empty());
    EXPECT_TRUE(made.empty());
    EXPECT_EQ(none.str(), "");
    EXPECT_EQ(none, made);
}

// Every one-run figure of a comparison shares the one reason text.
TEST(SharedText, OneRunFiguresShareTheirReason)
{
    FigureRuns f;
    f.figure.before_runs = RunSummary::of({ 1.0 });
    f.figure.after_runs = RunSummary::of({ 2.0 });
    const Judgement j1 = judgeFigure(f, {}), j2 = judgeFigure(f, {});
    ASSERT_FALSE(j1.reason.empty());
    EXPECT_EQ(&j1.reason.str(), &j2.reason.str());
}
