// SPDX-License-Identifier: GPL-2.0-or-later
#pragma once

// Semaphore array with blocking waits ("ipc/sem.c: optimize semtimedop" /
// "ipc semaphores: reduce ipc_lock contention in semtimedop"):
// before = one lock and one pending list for the whole array: every post
// re-tries every sleeper of every semaphore (update_queue()) and wakes the
// granted ones while still holding the array lock;
// after = a lock and a pending list per semaphore: a post looks only at its
// own semaphore's sleepers and wakes them after dropping the lock (wake_q).

#include <memory>

#include "lockscope/scaling/lock_profile.h"
#include "lockscope/scaling/pair.h"

namespace lockscope::scaling {

class SemArray {
public:
    virtual ~SemArray() = default;
    virtual int size() const = 0;
    // Adds n (> 0) to semaphore num and wakes the sleepers that can now proceed.
    virtual void post(int num, int n = 1) = 0;
    // Takes 1 from semaphore num, sleeping until that is possible. Returns
    // false if the array was removed before or while waiting (EIDRM).
    virtual bool wait(int num) = 0;
    // Takes 1 without sleeping; false if the value is 0 or the array is gone.
    virtual bool tryWait(int num) = 0;
    // Removes the array: every sleeper returns false, later calls fail.
    virtual void remove() = 0;

    // Consistency snapshot (take it when no operation is in flight).
    struct Audit {
        long long value = 0;       // current value
        unsigned long long posted = 0, taken = 0;
        size_t sleepers = 0;
    };
    virtual Audit audit(int num) const = 0;
};

// profile: the array lock (before) or the per-semaphore lock class (after).
std::unique_ptr<SemArray> makeSemArray(Variant variant, int nsems, LockProfile* profile = nullptr);

} // namespace lockscope::scaling
