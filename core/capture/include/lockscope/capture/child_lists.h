// SPDX-License-Identifier: GPL-2.0-or-later
#pragma once

#include <cstdint>
#include <vector>

namespace lockscope {

// A tree's children in one array, laid out from each node's parent (node 0
// is the root; every other node's parent has a smaller id): node i's
// children are ids[begin[i] .. begin[i + 1]), in the order they were added,
// since ids ascend. A vector of children per node costs 24 bytes and a heap
// block each; this costs 8 bytes a node. CallTree and the comparison's
// DiffTree both keep their children so.
template <class Nodes> void layOutChildren(const Nodes& nodes, std::vector<uint32_t>& begin, std::vector<uint32_t>& ids)
{
    begin.assign(nodes.size() + 1, 0);
    for (size_t i = 1; i < nodes.size(); ++i)
        ++begin[nodes[i].parent + 1];
    for (size_t i = 0; i < nodes.size(); ++i)
        begin[i + 1] += begin[i];
    ids.assign(nodes.empty() ? 0 : nodes.size() - 1, 0);
    std::vector<uint32_t> next(begin.begin(), begin.end() - 1);
    for (size_t i = 1; i < nodes.size(); ++i)
        ids[next[nodes[i].parent]++] = static_cast<uint32_t>(i);
}

} // namespace lockscope
