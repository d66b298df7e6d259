// SPDX-License-Identifier: GPL-2.0-or-later
#include "lockscope/capture/capture.h"

#include <algorithm>

namespace lockscope {

Stats& Stats::operator+=(const Stats& o) noexcept
{
    static_assert(sizeof(Stats) == 15 * sizeof(uint64_t), "a new Stats field must be summed here");
    events += o.events;
    lost += o.lost;
    map_full += o.map_full;
    stack_failures += o.stack_failures;
    aborted_waits += o.aborted_waits;
    unmatched += o.unmatched;
    recursion_misses += o.recursion_misses;
    holder_not_found += o.holder_not_found;
    stacks_unsampled += o.stacks_unsampled;
    own_lock_events += o.own_lock_events;
    impossible_holds += o.impossible_holds;
    hold_races += o.hold_races;
    waits_untimed += o.waits_untimed;
    syscalls_untimed += o.syscalls_untimed;
    cpu_unstacked += o.cpu_unstacked;
    owner_stacks_unsampled += o.owner_stacks_unsampled;
    return *this;
}

const Stack* Capture::findStack(uint32_t id) const noexcept
{
    for (const auto& s : stacks)
        if (s.id == id)
            return &s;
    return nullptr;
}

StackIndex::StackIndex(const Capture& capture)
{
    uint32_t maxId = 0;
    for (const auto& s : capture.stacks)
        maxId = std::max(maxId, s.id);
    // Dense when the id space is not much larger than the stack count.
    if (static_cast<uint64_t>(maxId) <= 4 * static_cast<uint64_t>(capture.stacks.size()) + 1024) {
        dense_.assign(static_cast<size_t>(maxId) + 1, nullptr);
        for (const auto& s : capture.stacks)
            dense_[s.id] = &s;
    } else {
        for (const auto& s : capture.stacks)
            sparse_.emplace(s.id, &s);
    }
}

const Stack* StackIndex::find(uint32_t id) const noexcept
{
    if (!dense_.empty())
        return id < dense_.size() ? dense_[id] : nullptr;
    auto it = sparse_.find(id);
    return it == sparse_.end() ? nullptr : it->second;
}

const char* toString(StackKind kind) noexcept
{
    return kind == StackKind::Kernel ? "kernel" : "user";
}

} // namespace lockscope
