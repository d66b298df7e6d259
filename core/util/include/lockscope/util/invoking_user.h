// SPDX-License-Identifier: GPL-2.0-or-later
#pragma once

#include <optional>
#include <sys/types.h>

namespace lockscope::util {

// The user a root lockscope is working for: sudo's SUDO_UID/SUDO_GID, or
// pkexec's PKEXEC_UID (its group from the passwd database, or -1 when the
// uid has no entry). nullopt unless the effective uid is 0 and one of them
// names a non-root user: run as a plain user or from a root login, nothing
// changes. Files root writes are handed to this user; the workload runs as
// this user (collector/run_as.h).
struct InvokingUser {
    uid_t uid;
    gid_t gid;
};
std::optional<InvokingUser> invokingUser();

} // namespace lockscope::util
