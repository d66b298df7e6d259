// SPDX-License-Identifier: GPL-2.0-or-later
#pragma once

#include <cstddef>
#include <vector>

#include "lockscope/reports/compare.h"

// The order a comparison's locks are shown in, biggest news first: by verdict
// severity (regressed, improved, withheld, not judged, then too few events,
// no significant change and undecided presence together), then by the size
// of the change of the judged figure. Too few events is no news: a lock of
// three waits must not lead the hot lock whose change missed the floor. With
// runs on both sides "only after"/"only before" is a presence the runs did
// not decide (a decided one is regressed/improved). With one run a side there
// are no verdicts: the changes the event test sees and the locks on one side
// only come first, by size. The one order for the GUI's compare table and the
// reports' "Top changed locks". Presentation only: the verdicts are compare's.
namespace lockscope::reports {

// 0 for the most severe verdict; runs: both sides have two or more runs.
int verdictSeverity(Verdict v, bool runs) noexcept;

// True when a comes before b.
bool changedBefore(const LockDelta& a, const LockDelta& b, bool runs);

// Indexes of c.locks in that order (ties keep the comparison's order).
std::vector<size_t> changedFirstOrder(const Comparison& c);

} // namespace lockscope::reports
