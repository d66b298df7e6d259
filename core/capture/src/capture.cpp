// SPDX-License-Identifier: GPL-2.0-or-later
#include "lockscope/capture/capture.h"

#include "stats_json.h"

#include <algorithm>
#include <string_view>

namespace lockscope {

namespace {
constexpr std::string_view kOffUnlessAskedFor = "off unless asked for";
}

std::string offUnlessAskedFor(const std::string& flag)
{
    return std::string(kOffUnlessAskedFor) + " (" + flag + ")";
}

bool offByChoice(const ProbeStatus& p)
{
    return !p.attached && (p.reason == kProbeDisabled || p.reason.starts_with(kOffUnlessAskedFor));
}

std::string syscallTimingNotMeasured(const Meta& meta, const std::vector<ProbeStatus>& probes)
{
    if (!meta.syscall_timing_skipped.empty())
        return meta.syscall_timing_skipped;
    for (const ProbeStatus& p : probes)
        if (p.name == "syscalls" && !p.attached && p.reason != kProbeDisabled)
            return "syscall latency " + (p.reason.starts_with(kOffUnlessAskedFor) ? p.reason : "not timed: " + p.reason);
    return {};
}

// Every counter adds: the walk is over capture's one table of them, which
// static_asserts that it names every field.
Stats& Stats::operator+=(const Stats& o) noexcept
{
    for (const detail::StatsField& f : detail::kStatsFields)
        this->*f.counter += o.*f.counter;
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
