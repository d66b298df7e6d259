// SPDX-License-Identifier: GPL-2.0-or-later
#pragma once

#include <atomic>
#include <cstdint>
#include <deque>
#include <mutex>
#include <span>
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
// node. total is what passed through a node, self(id) what ended at it.
class CallTree {
public:
    static constexpr uint32_t kRoot = 0;

    // 32 bytes: a big capture's tree has 300k+ nodes, and the GUI keeps its
    // trees as long as the capture is open. A tree has a few thousand
    // distinct frames, so a node holds its frame's id; what ended at a node
    // is its total less its children's, not a second Weights.
    struct Node {
        uint32_t frame = 0; // frameName(frame); 0 is the root's ("", "")
        uint32_t parent = kRoot;
        Weights total;
    };

    explicit CallTree(TreeDirection direction = TreeDirection::TopDown);

    TreeDirection direction() const noexcept { return direction_; }
    // frames innermost first, as in Stack::frames.
    void addStack(const std::vector<Frame>& frames, const Weights& w);
    // Adds every node of other (same direction) into this tree.
    void merge(const CallTree& other);

    const Node& node(uint32_t id) const { return nodes_.at(id); }
    const FrameName& frameName(uint32_t frame) const { return frames_.at(frame); }
    InternedString function(uint32_t id) const { return frameName(node(id).frame).first; }
    InternedString module(uint32_t id) const { return frameName(node(id).frame).second; }
    // What ended at id: its total less its children's (saturated sums, which
    // only absurd captures reach, make this a floor at zero, not exact).
    Weights self(uint32_t id) const;
    size_t frameCount() const noexcept { return frames_.size(); }
    // The children of id in the order they were added. Laid out for every
    // node at the first call after the tree grew; threads may read one tree
    // at once, as long as none is adding to it.
    std::span<const uint32_t> children(uint32_t id) const;
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
    // The trees of whole captures are built once and kept (the GUI keeps
    // two): the indexes that find a child while building go, and come back
    // (indexNodes) if the tree is added to again.
    void finishBuilding();
    void indexNodes();
    void mergeNode(const CallTree& other, uint32_t otherId, uint32_t mine);

    // Every node's children in one array, laid out from the parents: a
    // vector per node cost 24 bytes and a heap block each, a third of the
    // memory of a big capture's trees (core/capture/bench/README.md).
    struct ChildLists {
        std::vector<uint32_t> begin; // node -> its first child's place in ids; one more at the end
        std::vector<uint32_t> ids;
        std::atomic<size_t> laidOutFor { 0 }; // nodes_.size() when laid out
        std::mutex mutex;
        ChildLists() = default;
        ChildLists(const ChildLists&) { } // a copy lays its own out
        ChildLists& operator=(const ChildLists&)
        {
            laidOutFor = 0;
            return *this;
        }
    };
    void layOutChildren() const;

    TreeDirection direction_;
    // A deque: a vector grown by doubling held its old and new arrays at once
    // and up to twice the nodes it needs.
    std::deque<Node> nodes_;
    mutable ChildLists children_;
    // Each distinct (function, module) gets an id (its place in frames_);
    // children are then found by (parent << 32 | frame id), so building is
    // linear in frames. The two indexes are empty after finishBuilding.
    std::vector<FrameName> frames_;
    std::unordered_map<FrameName, uint32_t, FrameNameHash> frameIds_;
    FlatIndex childIndex_;
};

// The node name of a frame without a symbol: its address, so distinct
// unresolved frames stay apart ("[unknown]" without one).
std::string unresolvedFrameName(const Frame& f);

// "function" or "function [module]" for display.
std::string frameLabel(const Frame& frame);

} // namespace lockscope
