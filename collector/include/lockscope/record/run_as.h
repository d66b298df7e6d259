// SPDX-License-Identifier: GPL-2.0-or-later
#pragma once

#include <optional>
#include <string>
#include <sys/types.h>
#include <vector>

// Who the workload runs as. Under sudo or pkexec the recorder is root but
// the workload is the user's program: it runs as that user, with the user's
// supplementary groups and HOME/USER/LOGNAME (`--as-root` keeps root).
namespace lockscope::record {

struct RunAs {
    uid_t uid = 0;
    gid_t gid = 0;
    std::vector<gid_t> groups;  // supplementary, as initgroups would set them
    std::string user, home;
};

// The invoking user (lockscope/util/invoking_user.h) with the passwd
// and group databases' view of it, read now: the child switches with plain
// syscalls only. nullopt when lockscope was not run through sudo/pkexec.
std::optional<RunAs> invokingUserCredentials();

// environ with HOME, USER and LOGNAME set for `who`.
std::vector<std::string> environmentFor(const RunAs& who);

} // namespace lockscope::record
