// SPDX-License-Identifier: GPL-2.0-or-later
#pragma once
// The wait probe's holders map (Options::holder_stacks): contended spinlock
// waits summed per waiter site and holder stack, each entry in the drain
// generation its wait's histogram went to (ls_holder_key.gen), so a window
// drains a wait and its holder together.
#include <vector>

#include "lockscope/probes/probes.h"
#include "bpf_util.h"

namespace lockscope::probes::detail {

// Every entry, both generations summed.
std::vector<HolderRecord> readHolders(int holders_map_fd);

// The closed generation's entries (ls_holder_key.gen), as drainGeneration
// takes them.
std::vector<HolderRecord> drainHolders(int holders_map_fd, ClosedGeneration closed);

} // namespace lockscope::probes::detail
