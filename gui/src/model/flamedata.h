// SPDX-License-Identifier: GPL-2.0-or-later
#pragma once

#include <cstdint>
#include <memory>
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

// A frame's function and module, as places in FlameData::names.
struct FlameFrame {
    uint32_t function = 0;
    uint32_t module = 0;
};

// A top-down tree as the flame graph reads it: each node's width, and for
// differential graphs the figure on both sides. Kept apart from the widget
// so layout and colouring are testable without painting. It reads the tree
// it was made from, shared, rather than copying it (a big capture's tree is
// 300k+ nodes); what it adds is its children sorted by name (4 bytes a
// node) and each frame's names once.
struct FlameData {
    FlameWeight weight = FlameWeight::Wait;
    bool widthsFromBefore = false; // differential: Gregg's --negate view, where vanished stacks stay visible

    bool differential() const noexcept { return diff != nullptr; }
    size_t size() const noexcept;
    uint32_t parent(uint32_t id) const noexcept;
    uint32_t frameOf(uint32_t id) const noexcept; // its place in frames
    double value(uint32_t id) const noexcept; // width weight
    // A node's figure before and after; a graph of one capture is all after.
    double before(uint32_t id) const noexcept;
    double after(uint32_t id) const noexcept;
    const QString& function(uint32_t id) const noexcept { return names[frames[frameOf(id)].function]; }
    const QString& module(uint32_t id) const noexcept { return names[frames[frameOf(id)].module]; }
    // A node's children, sorted by function name as flame graphs are: at the
    // places the tree keeps them (lockscope/capture/child_lists.h), so only
    // their order is the graph's own.
    std::span<const uint32_t> children(uint32_t id) const;
    bool drawsNothing() const noexcept { return size() <= 1 || value(0) <= 0.0; }
    // A differential node's change against its larger side, -1 (gone) .. +1
    // (new): how strongly it is coloured. Not against the graph's largest
    // change (flamegraph.pl's scale), which paints the biggest change full red
    // however small it is.
    double relativeChange(uint32_t id) const noexcept;

    // The tree shown: a capture's (tree) or a comparison's (diff).
    std::shared_ptr<const CallTree> tree;
    std::shared_ptr<const reports::DiffTree> diff;
    std::vector<FlameFrame> frames; // by frame id; frames[0] is the root's ("all")
    std::vector<QString> names; // of functions and modules; names[0] is ""
    std::vector<uint32_t> childIds; // the tree's child array, each node's part sorted
};

FlameData flameFromCallTree(std::shared_ptr<const CallTree> tree, FlameWeight weight);
FlameData flameFromDiffTree(
    std::shared_ptr<const reports::DiffTree> tree, FlameWeight weight, bool widthsFromBefore = false);

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
