// SPDX-License-Identifier: GPL-2.0-or-later
#include "lockscope/capture/flat_index.h"

namespace lockscope {

FlatIndex::FlatIndex(size_t expected)
{
    size_t cap = 16;
    while (cap < expected * 2)
        cap *= 2;
    keys_.assign(cap, 0);
    values_.assign(cap, kEmpty);
}

std::pair<uint32_t, bool> FlatIndex::tryEmplace(uint64_t key, uint32_t value)
{
    if ((size_ + 1) * 2 > keys_.size())
        grow();
    const size_t mask = keys_.size() - 1;
    for (size_t i = mix64(key) & mask;; i = (i + 1) & mask) {
        if (values_[i] == kEmpty) {
            keys_[i] = key;
            values_[i] = value;
            ++size_;
            return {value, true};
        }
        if (keys_[i] == key)
            return {values_[i], false};
    }
}

std::optional<uint32_t> FlatIndex::find(uint64_t key) const noexcept
{
    const size_t mask = keys_.size() - 1;
    for (size_t i = mix64(key) & mask;; i = (i + 1) & mask) {
        if (values_[i] == kEmpty)
            return std::nullopt;
        if (keys_[i] == key)
            return values_[i];
    }
}

void FlatIndex::grow()
{
    std::vector<uint64_t> keys(keys_.size() * 2, 0);
    std::vector<uint32_t> values(keys.size(), kEmpty);
    const size_t mask = keys.size() - 1;
    for (size_t j = 0; j < keys_.size(); ++j) {
        if (values_[j] == kEmpty)
            continue;
        size_t i = mix64(keys_[j]) & mask;
        while (values[i] != kEmpty)
            i = (i + 1) & mask;
        keys[i] = keys_[j];
        values[i] = values_[j];
    }
    keys_.swap(keys);
    values_.swap(values);
}

} // namespace lockscope
