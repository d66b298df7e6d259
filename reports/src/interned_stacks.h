// SPDX-License-Identifier: GPL-2.0-or-later
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "lockscope/capture/calltree.h"
#include "lockscope/capture/capture.h"
#include "lockscope/capture/flat_index.h"

// Integer ids for the frames and call paths of the two captures being
// compared, so the comparison hashes integers instead of building
// "function [module]" strings for every frame of every site (which made
// compare allocation-bound on 100k-stack captures).
namespace lockscope::reports {

using lockscope::FlatIndex;

// Frames and call paths shared by both sides of a comparison. A frame's
// identity is CallTree's: (name, module), unresolved frames named by their
// address. A path's identity is its sequence of frameLabel() strings.
class FrameTable {
public:
    struct TreeFrame {
        InternedString name; // as CallTree names the node
        InternedString module;
    };
    FrameTable();
    // Appends the stack's frame ids (tree identity) outermost first to out and
    // returns its path id (the "[no stack]" path when it is absent or empty).
    uint32_t intern(const Stack* stack, std::vector<uint32_t>& out);

    const TreeFrame& frame(uint32_t id) const { return frames_[id]; }
    size_t frameCount() const noexcept { return frames_.size(); }
    std::vector<InternedString> pathLabels(uint32_t path) const;
    // Strict total order of paths equal to comparing their label vectors.
    bool pathLess(uint32_t a, uint32_t b) const;
    // Must be called after the last intern() and before pathLess().
    void finishLabels();
    size_t pathCount() const noexcept { return pathBegin_.size(); }

private:
    struct FrameIds {
        uint32_t tree;
        uint32_t label;  // of a resolved frame with this name
    };

    FrameIds frameIds(InternedString name, InternedString module);
    uint32_t labelId(std::string label);
    uint32_t pathId(const std::vector<uint32_t>& labels);

    std::unordered_map<FrameName, FrameIds, FrameNameHash> byName_;
    std::vector<TreeFrame> frames_;
    std::unordered_map<std::string, uint32_t> labelIndex_;
    std::vector<InternedString> labels_;
    std::vector<uint32_t> labelRank_;
    // Paths as label-id sequences in one pool; pathSlots_ is an open-addressing
    // set of path ids keyed by the sequence's hash.
    std::vector<uint32_t> pathPool_;
    std::vector<uint32_t> pathBegin_, pathSize_;
    std::vector<uint64_t> pathHash_;
    std::vector<uint32_t> pathSlots_;
    uint32_t noStackPath_ = 0;
};

// One capture's stacks, interned on first use (sites reference a fraction
// of the stacks, and some stacks many times).
class InternedCapture {
public:
    struct Entry {
        uint32_t begin = 0, size = 0;  // frame ids in frames()
        uint32_t path = 0;
    };
    InternedCapture(const Capture& capture, FrameTable& table);
    const Entry& stack(uint32_t stackId);
    // A stack stack() interned before; throws std::logic_error for another.
    // Reads only: threads may call it at once.
    const Entry& interned(uint32_t stackId) const;
    const uint32_t* frames(const Entry& e) const { return pool_.data() + e.begin; }
    const StackIndex& index() const { return index_; }

private:
    size_t position(const Stack* s) const; // in entries_
    const Capture& capture_;
    FrameTable& table_;
    StackIndex index_;
    std::vector<Entry> entries_;  // by position in capture.stacks, then one for absent stacks
    std::vector<bool> done_;
    std::vector<uint32_t> pool_;
};

} // namespace lockscope::reports
