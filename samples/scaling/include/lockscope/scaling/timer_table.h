// SPDX-License-Identifier: GPL-2.0-or-later
#pragma once

// The POSIX timer id table ("posix-timers: RCU conversion"): before = every
// lookup takes one global spinlock, finds the timer and locks it, then drops
// the global lock; after = lookup walks the hash chain under RCU (liburcu) and
// locks only the timer, re-checking that it was not deleted meanwhile. Deleted
// timers are freed only after a grace period, so a concurrent lookup never
// touches freed memory.

#include <cstdint>
#include <memory>
#include <optional>

#include "lockscope/scaling/lock_profile.h"
#include "lockscope/scaling/pair.h"

namespace lockscope::scaling {

struct TimerValue {
    int64_t expires_ns = 0;
    int64_t interval_ns = 0;
    uint64_t overruns = 0;
};

class TimerTable {
public:
    virtual ~TimerTable() = default;
    // timer_create(): a new id.
    virtual int create(int64_t expires_ns, int64_t interval_ns) = 0;
    // timer_gettime(): lookup + per-timer lock + read; nothing if the id does
    // not name a live timer (EINVAL).
    virtual std::optional<TimerValue> get(int id) = 0;
    // timer_settime(); false if the id is gone.
    virtual bool set(int id, int64_t expires_ns, int64_t interval_ns) = 0;
    // timer_delete(); false if the id is gone.
    virtual bool remove(int id) = 0;
    virtual size_t liveCount() const = 0;
};

// tableLock: the global lock (before) or the table's writer lock (after);
// timerLock: the per-timer lock class.
std::unique_ptr<TimerTable> makeTimerTable(Variant variant, LockProfile* tableLock = nullptr,
                                           LockProfile* timerLock = nullptr);

} // namespace lockscope::scaling
