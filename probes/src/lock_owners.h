// SPDX-License-Identifier: GPL-2.0-or-later
#pragma once
// Reading the lock-owner maps of the wait probe (Options::lock_owner).
#include <vector>

#include "lockscope/probes/probes.h"
#include "lockscope_bpf.h"

namespace lockscope::probes::detail {

struct OwnerMapFds {
    int owners = -1;       // ls_owner_key -> ls_holder_val
    int owner_stacks = -1; // stack hash -> ls_owner_stack
    int owner_comms = -1;  // tid -> ls_owner_comm
};

// The owners map plus the ended waits not yet drained into it (read after
// detach, they are exact), each with its owner's name and stack.
std::vector<OwnerRecord> readOwners(const OwnerMapFds& fds, const std::vector<ls_wait_done>& undrained);

} // namespace lockscope::probes::detail
