// SPDX-License-Identifier: GPL-2.0-or-later
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "lockscope/capture/capture.h"
#include "lockscope/capture/flat_index.h"

namespace lockscope {

// The costs a call-tree node carries. wait_ns/hold_ns are totals over the
// events that passed through the node.
struct Weights {
    uint64_t count = 0;
    uint64_t wait_ns = 0;
    uint64_t hold_ns = 0;
    Weights& operator+=(const Weights& o) noexcept;
    bool operator==(const Weights&) const = default;
};

enum class TreeDirection {
    TopDown,  // root -> outermost caller -> ... -> leaf (flame graph order)
    BottomUp, // root -> leaf -> its callers (who calls the hot function)
};

// A frame's identity in call trees: (function, module), without the offset.
using FrameName = std::pair<InternedString, InternedString>;
struct FrameNameHash {
    size_t operator()(const FrameName& name) const noexcept;
};

// A call tree built from stacks. Frames are identified by (function, module)
// without offsets, so trees from two kernel builds can be compared node by
// node. self is what ended at a node, total what passed through it.
class CallTree {
public:
    static constexpr uint32_t kRoot = 0;

    struct Node {
        InternedString function;
        InternedString module;
        uint32_t parent = kRoot;
        std::vector<uint32_t> children;
        Weights self;
        Weights total;
    };

    explicit CallTree(TreeDirection direction = TreeDirection::TopDown);

    TreeDirection direction() const noexcept { return direction_; }
    // frames innermost first, as in Stack::frames.
    void addStack(const std::vector<Frame>& frames, const Weights& w);
    // Adds every node of other (same direction) into this tree.
    void merge(const CallTree& other);

    const Node& node(uint32_t id) const { return nodes_.at(id); }
    size_t size() const noexcept { return nodes_.size(); }
    const Node& root() const { return nodes_.front(); }
    // Child of parent with that function/module, or kRoot when none.
    uint32_t findChild(uint32_t parent, InternedString function, InternedString module) const;

    // The tree of one lock: each site's stack weighted by its wait/hold, the
    // unwalked events shared out over the walked sites (site_shares.h).
    static CallTree forLock(const Capture& capture, const Lock& lock, TreeDirection direction);
    // All locks of a capture.
    static CallTree forCapture(const Capture& capture, TreeDirection direction);

private:

    uint32_t childFor(uint32_t parent, InternedString function, InternedString module);
    void mergeNode(const CallTree& other, uint32_t otherId, uint32_t mine);

    TreeDirection direction_;
    std::vector<Node> nodes_;
    // Each distinct (function, module) gets an id; children are then found by
    // (parent << 32 | frame id), so building is linear in frames.
    std::unordered_map<FrameName, uint32_t, FrameNameHash> frameIds_;
    FlatIndex childIndex_;
};

// The node name of a frame without a symbol: its address, so distinct
// unresolved frames stay apart ("[unknown]" without one).
std::string unresolvedFrameName(const Frame& f);

// "function" or "function [module]" for display.
std::string frameLabel(const Frame& frame);

} // namespace lockscope
