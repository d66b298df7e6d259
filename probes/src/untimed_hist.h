// SPDX-License-Identifier: GPL-2.0-or-later
#pragma once

// Histograms filled under a timing budget (time_budget.bpf.h): count has
// every event, the slots, total, min and max only the timed ones.

#include <cstdint>

#include "lockscope_bpf.h"

namespace lockscope::probes::detail {

// Events of h that were timed: its slots' sum (count has the untimed ones too).
uint64_t timedCount(const ls_hist& h);

// Adds `untimed` events to h's slots, total, min and max in the proportions
// of `like`'s timed ones (largest remainders get the leftover units, so the
// slots add up exactly); h.count is left as it is. like must have a timed event.
void spreadUntimed(ls_hist& h, uint64_t untimed, const ls_hist& like);

} // namespace lockscope::probes::detail
