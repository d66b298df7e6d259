// SPDX-License-Identifier: GPL-2.0-or-later
// The HTML comparison's differential flame graph: frames too narrow to draw
// hide their callees but still take their width from the siblings after them.
#include <gtest/gtest.h>

#include <string>

#include "lockscope/reports/compare.h"
#include "lockscope/reports/render.h"

using namespace lockscope;
using namespace lockscope::reports;

namespace {

// A child of `parent` waiting `wait_ns` before (none after).
uint32_t frame(DiffTree& t, uint32_t parent, const char* function, uint64_t wait_ns)
{
    t.frames.push_back(DiffFrame { InternedString(function), {} });
    DiffNode n;
    n.frame = uint32_t(t.frames.size() - 1);
    n.parent = parent;
    n.before_wait_ns = wait_ns;
    t.nodes.push_back(n);
    return uint32_t(t.nodes.size() - 1);
}

// Where the frame whose tooltip starts with `label` is drawn: its rect's x.
std::string drawnAt(const std::string& html, const std::string& label)
{
    const size_t tip = html.find("<title>" + label + ":");
    if (tip == std::string::npos)
        return "not drawn";
    const size_t x = html.find("<rect x=\"", tip) + 9;
    return html.substr(x, html.find('"', x) - x);
}

} // namespace

TEST(FlameGraph, NarrowFramesHideTheirCalleesAndKeepTheirWidth)
{
    // The graph is 1200 px wide: of a root of 24000 ns, 8 ns is 0.4 px.
    Comparison c;
    DiffNode root;
    root.before_wait_ns = 24000;
    c.tree.nodes.push_back(root);
    const uint32_t narrow = frame(c.tree, 0, "a_narrow", 8);
    frame(c.tree, narrow, "a_callee", 8);
    const uint32_t wide = frame(c.tree, 0, "b_wide", 23992);
    frame(c.tree, wide, "b_callee", 23992);
    c.tree.linkChildren();
    const std::string html = render(c, Format::Html);
    EXPECT_EQ(drawnAt(html, "a_narrow"), "not drawn");
    EXPECT_EQ(drawnAt(html, "a_callee"), "not drawn");
    EXPECT_EQ(drawnAt(html, "b_wide"), "0.4") << "after the narrow frame's 0.4 px";
    EXPECT_EQ(drawnAt(html, "b_callee"), "0.4");
}
