// SPDX-License-Identifier: GPL-2.0-or-later
#pragma once

#include <Qt>

namespace lockscope::gui {

// Roles shared by every model so one proxy setup serves all views: sorting
// uses the raw number, never the formatted text ("2 ms" < "900 ns").
enum Role : int {
    SortRole = Qt::UserRole + 1,
    FractionRole,    // share of the column's total in [0, 1], for cost bars
    LockIndexRole,   // index into Capture::locks
    NodeIdRole,      // CallTree node id
    EntryIndexRole,  // row of a latency model (syscalls first, then functions)
};

} // namespace lockscope::gui
