// SPDX-License-Identifier: GPL-2.0-or-later
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include <QString>

#include "lockscope/capture/calltree.h"

namespace lockscope::reports {
struct DiffTree;
}

namespace lockscope::gui {

enum class FlameWeight { Wait, Hold, Count };
QString toDisplayString(FlameWeight w);

// A top-down tree prepared for the flame graph: each node's width weight,
// and for differential graphs the figure on both sides. Kept apart from the
// widget so layout and colouring are testable without painting. 16 bytes a
// node (a big capture's graph has 300k+): a tree has a few thousand distinct
// frames, and only a differential graph has two sides.
struct FlameNode {
    uint32_t frame = 0; // FlameData::frames; 0 is the root's ("all")
    uint32_t parent = 0;
    double value = 0.0; // width weight
};

struct FlameSides {
    double before = 0.0;
    double after = 0.0;
};

// A frame's function and module, as places in FlameData::names.
struct FlameFrame {
    uint32_t function = 0;
    uint32_t module = 0;
};

struct FlameData {
    std::vector<FlameNode> nodes;   // nodes[0] is the root; a parent before its children
    std::vector<FlameSides> sides; // differential graphs' only: one per node
    FlameWeight weight = FlameWeight::Wait;
    bool differential = false;
    // A node's children, sorted by function name as flame graphs are; in one
    // array for the whole tree (lockscope/capture/child_lists.h says why).
    std::span<const uint32_t> children(uint32_t id) const noexcept
    {
        if (id + 1 >= childBegin.size())
            return {};
        return {childIds.data() + childBegin[id], childIds.data() + childBegin[id + 1]};
    }
    std::vector<uint32_t> childBegin; // nodes.size() + 1 entries once laid out
    std::vector<uint32_t> childIds;
    std::vector<FlameFrame> frames;
    std::vector<QString> names;       // of functions and modules; names[0] is ""
    const QString& function(uint32_t id) const noexcept { return names[frames[nodes[id].frame].function]; }
    const QString& module(uint32_t id) const noexcept { return names[frames[nodes[id].frame].module]; }
    // A node's figure before and after; a graph of one capture is all after.
    double before(uint32_t id) const noexcept { return differential ? sides[id].before : 0.0; }
    double after(uint32_t id) const noexcept { return differential ? sides[id].after : nodes[id].value; }
    bool empty() const noexcept { return nodes.size() <= 1 || nodes.front().value <= 0.0; }
    // A differential node's change against its larger side, -1 (gone) .. +1
    // (new): how strongly it is coloured. Not against the graph's largest
    // change (flamegraph.pl's scale), which paints the biggest change full red
    // however small it is.
    double relativeChange(uint32_t id) const noexcept;
};

FlameData flameFromCallTree(const CallTree& tree, FlameWeight weight);
// widthsFromBefore: Gregg's --negate view, where vanished stacks stay visible.
FlameData flameFromDiffTree(const reports::DiffTree& tree, FlameWeight weight, bool widthsFromBefore = false);

// The node a path leads to from the root, outermost frame first, in
// frameLabel() form ("function [module]", as reports' paths and holder rows
// have them): as deep as the path matches, 0 (the root) if its first frame
// does not.
uint32_t flameNodeOnPath(const FlameData& data, const std::vector<std::string>& frameLabels);

// Node whose function contains the text (case-insensitive): the ids, and the
// share of the root's value they cover without double counting nested matches.
struct FlameSearch {
    std::vector<bool> matched;
    double coveredShare = 0.0;
};
FlameSearch searchFlame(const FlameData& data, const QString& text);

} // namespace lockscope::gui
