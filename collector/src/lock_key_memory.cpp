// SPDX-License-Identifier: GPL-2.0-or-later
#include "lockscope/record/lock_key_memory.h"

#include <utility>

namespace lockscope::record {

const LockKeyMemory::Key* LockKeyMemory::recall(const Identity& identity) const
{
    auto it = keys_.find(identity);
    return it == keys_.end() ? nullptr : &it->second;
}

void LockKeyMemory::remember(const Identity& identity, std::string key, bool passed)
{
    keys_[identity] = Key { std::move(key), passed, window_ };
}

void LockKeyMemory::endWindow()
{
    ++window_;
    std::erase_if(keys_, [this](const auto& entry) { return window_ - entry.second.window >= kWindows; });
}

} // namespace lockscope::record
