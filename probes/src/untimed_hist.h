// SPDX-License-Identifier: GPL-2.0-or-later
#pragma once

// Histograms filled under a timing budget (time_budget.bpf.h): count has
// every event, the slots, total, min and max only the timed ones.

#include <cstddef>
#include <cstdint>
#include <map>
#include <utility>

#include "lockscope/capture/capture.h"
#include "lockscope_bpf.h"

namespace lockscope::probes::detail {

// Events of h that were timed: its slots' sum (count has the untimed ones too).
uint64_t timedCount(const ls_hist& h);

// Adds `untimed` events to h's slots, total, min and max in the proportions
// of `like`'s timed ones (largest remainders get the leftover units, so the
// slots add up exactly); h.count is left as it is. like must have a timed event.
void spreadUntimed(ls_hist& h, uint64_t untimed, const ls_hist& like);

// The timed shape (a `like` for spreadUntimed) each key last had in a window
// read out by a drain. An untimed event always follows a timed one of its key
// on its CPU (time_budget.bpf.h), but that one may have been read out in an
// earlier window: a window that timed none of a key's events gives them the
// shape the key last had. Keeps the keys of the kMax most recent.
class LastShapes {
public:
    using Key = std::pair<uint64_t, uint32_t>;

    void remember(const Key& key, const ls_hist& like);
    // Null when the key had no timed event in a window kept.
    const ls_hist* find(const Key& key);
    // After a window's reads: forgets all but the kMax keys used most recently.
    void endWindow();
    size_t size() const { return shapes_.size(); }

    static constexpr size_t kMax = 1024;

private:
    struct Entry {
        ls_hist like;
        uint64_t window; // last remembered or found
    };
    std::map<Key, Entry> shapes_;
    uint64_t window_ = 0;
};

// Untimed waits or calls no timed one could lend a time to: lost, and said
// apart (Stats::untimed_unplaced is the part of lost they are).
inline void countUnplaced(Stats& s, uint64_t n)
{
    s.lost += n;
    s.untimed_unplaced += n;
}

} // namespace lockscope::probes::detail
