// SPDX-License-Identifier: GPL-2.0-or-later
#pragma once

// An IPC semaphore object whose semop() runs permission and security checks
// ("ipc,sem: do not hold ipc lock more than necessary"): before = the object
// lock is taken first and held across the checks; after = the checks run on
// the immutable permission data without the lock, and the lock is taken late,
// only around the deleted-check and the value update.

#include <array>
#include <atomic>
#include <cstdint>
#include <memory>
#include <vector>

#include "lockscope/scaling/lock_profile.h"
#include "lockscope/scaling/pair.h"

namespace lockscope::scaling {

struct Credentials {
    uint32_t uid = 0, gid = 0;
    uint32_t label = 0;  // security label of the task (an LSM context id)
};

// Result codes as semop(2) would return them (negated errno style).
enum class SemopResult { Ok, Again, Access, Removed };

class IpcSemObject {
public:
    virtual ~IpcSemObject() = default;
    // Adds delta to semaphore num unless the result would be negative (Again),
    // the caller lacks permission (Access), or the object is gone (Removed).
    virtual SemopResult semop(const Credentials& cred, int num, int delta) = 0;
    virtual void markRemoved() = 0;
    virtual long long value(int num) const = 0;
    virtual int size() const = 0;
};

// Owner uid/gid and mode as in ipc_perm; the security policy is a small
// rule table scanned per call, standing in for an LSM hook.
struct IpcPermissions {
    uint32_t uid = 1000, gid = 1000;
    uint32_t mode = 0660;
    uint32_t label = 7;
};

std::unique_ptr<IpcSemObject> makeIpcSemObject(Variant variant, int nsems, IpcPermissions perm,
                                               LockProfile* profile = nullptr);

} // namespace lockscope::scaling
