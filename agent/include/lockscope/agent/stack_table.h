// SPDX-License-Identifier: GPL-2.0-or-later
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "lockscope/capture/capture.h"

// The agent's stacks since start, interned: each distinct frame (function,
// offset, module) is stored once, a stack is its kind and frame numbers.
// A fork-heavy machine keeps bringing kernel paths the sum has not seen;
// interned, a new stack costs ~4 bytes a frame instead of a copy of every
// frame's strings, twice (the stack and its lookup key).
namespace lockscope::agent {

class StackTable {
public:
    explicit StackTable(size_t maxStacks) : max_(maxStacks) {}

    // The stack's number here; nullopt when it is new and the table is full
    // (unless evenWhenFull: the one stack that stands for the ones refused).
    std::optional<uint32_t> intern(const Stack& s, bool evenWhenFull = false);
    // The stack numbered id, its frames as first seen.
    Stack stack(uint32_t id) const;
    size_t size() const { return byId_.size(); }

private:
    uint32_t frameId(const Frame& f);

    size_t max_;
    std::vector<Frame> frames_;
    std::unordered_map<std::string, uint32_t> frameIds_;  // function, module, offset packed
    // Key: kind byte, then each frame's number (4 bytes); byId_ points at the
    // map's keys, which stay put while the map grows.
    std::unordered_map<std::string, uint32_t> stackIds_;
    std::vector<const std::string*> byId_;
};

} // namespace lockscope::agent
