// SPDX-License-Identifier: GPL-2.0-or-later
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <utility>
#include <vector>

namespace lockscope {

// splitmix64's finalizer: sequential ids must spread over a hash table.
inline uint64_t mix64(uint64_t x) noexcept
{
    x ^= x >> 30;
    x *= 0xbf58476d1ce4e5b9ull;
    x ^= x >> 27;
    x *= 0x94d049bb133111ebull;
    x ^= x >> 31;
    return x;
}

// Open-addressing map from a 64-bit key to a 32-bit value: call trees
// find a node's child by (parent << 32 | frame) once per frame of every
// stack, where std::unordered_map's node per entry was most of the cost.
// No erase, no per-entry allocation.
class FlatIndex {
public:
    explicit FlatIndex(size_t expected = 0);
    // {value, inserted}: the stored value, or value itself when newly inserted.
    std::pair<uint32_t, bool> tryEmplace(uint64_t key, uint32_t value);
    std::optional<uint32_t> find(uint64_t key) const noexcept;

private:
    void grow();
    static constexpr uint32_t kEmpty = UINT32_MAX;
    std::vector<uint64_t> keys_;
    std::vector<uint32_t> values_;
    size_t size_ = 0;
};

} // namespace lockscope
