// SPDX-License-Identifier: GPL-2.0-or-later
#include "lockscope/agent/stack_table.h"

#include <cstring>

namespace lockscope::agent {

namespace {

void appendBytes(std::string& out, const void* p, size_t n)
{
    out.append(static_cast<const char*>(p), n);
}

} // namespace

uint32_t StackTable::frameId(const Frame& f)
{
    std::string key = f.function;
    key += '\0';
    key += f.module;
    key += '\0';
    appendBytes(key, &f.offset, sizeof f.offset);
    const auto [it, fresh] = frameIds_.try_emplace(std::move(key), uint32_t(frames_.size()));
    if (fresh)
        frames_.push_back(f);
    return it->second;
}

std::optional<uint32_t> StackTable::intern(const Stack& s, bool evenWhenFull)
{
    std::string key(1, char(s.kind));
    key.reserve(1 + 4 * s.frames.size());
    for (const Frame& f : s.frames) {
        const uint32_t id = frameId(f);
        appendBytes(key, &id, sizeof id);
    }
    if (auto it = stackIds_.find(key); it != stackIds_.end())
        return it->second;
    if (byId_.size() >= max_ && !evenWhenFull)
        return std::nullopt;
    const auto id = uint32_t(byId_.size());
    const auto it = stackIds_.emplace(std::move(key), id).first;
    byId_.push_back(&it->first);
    return id;
}

Stack StackTable::stack(uint32_t id) const
{
    const std::string& key = *byId_.at(id);
    Stack s;
    s.id = id;
    s.kind = StackKind(key[0]);
    s.frames.reserve((key.size() - 1) / 4);
    for (size_t at = 1; at + 4 <= key.size(); at += 4) {
        uint32_t frame = 0;
        std::memcpy(&frame, key.data() + at, sizeof frame);
        s.frames.push_back(frames_[frame]);
    }
    return s;
}

} // namespace lockscope::agent
