// SPDX-License-Identifier: GPL-2.0-or-later
#pragma once

#include <cstdint>
#include <iterator>

#include "json_access.h"
#include "lockscope/capture/capture.h"

// Stats as the capture format holds them (docs/capture-format.md): one
// table read by the writer and the reader, so that a new counter is named once.
namespace lockscope::detail {

struct StatsField {
    const char* name;
    uint64_t Stats::*counter;
    bool always; // else written only when non-zero, and absent reads as 0 (older captures)
};

// In the order the writer puts them in a file.
inline constexpr StatsField kStatsFields[] = {
    { "events", &Stats::events, true },
    { "lost", &Stats::lost, true },
    { "map_full", &Stats::map_full, true },
    { "stack_failures", &Stats::stack_failures, true },
    { "aborted_waits", &Stats::aborted_waits, true },
    { "unmatched", &Stats::unmatched, true },
    { "recursion_misses", &Stats::recursion_misses, true },
    { "holder_not_found", &Stats::holder_not_found, false }, // holder-stack captures
    { "stacks_unsampled", &Stats::stacks_unsampled, false }, // stack sampling left waits without a stack
    { "own_lock_events", &Stats::own_lock_events, false },
    { "impossible_holds", &Stats::impossible_holds, false },
    { "hold_races", &Stats::hold_races, false },
    { "waits_untimed", &Stats::waits_untimed, false },
    { "syscalls_untimed", &Stats::syscalls_untimed, false },
    { "cpu_unstacked", &Stats::cpu_unstacked, false },
    { "owner_stacks_unsampled", &Stats::owner_stacks_unsampled, false },
    { "stale_holds", &Stats::stale_holds, false },
    { "bpf_frames", &Stats::bpf_frames, false },
    { "map_busy", &Stats::map_busy, false },
    { "untimed_unplaced", &Stats::untimed_unplaced, false }, // a part of lost
    { "stack_collisions", &Stats::stack_collisions, false }, // a part of stack_failures
    { "stacks_nested", &Stats::stacks_nested, false },       // a part of stack_failures
    { "stacks_spilled", &Stats::stacks_spilled, false },
};
static_assert(std::size(kStatsFields) * sizeof(uint64_t) == sizeof(Stats), "a new Stats field needs its JSON name here");

// J is ordered_json for the writer (fields in table order) or json for toJson().
template <class J> J statsToJson(const Stats& s)
{
    J j = J::object();
    for (const StatsField& f : kStatsFields)
        if (f.always || s.*f.counter)
            j[f.name] = s.*f.counter;
    return j;
}

Stats statsFromJson(const json& j, const Path& at);

} // namespace lockscope::detail
