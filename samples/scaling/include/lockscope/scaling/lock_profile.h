// SPDX-License-Identifier: GPL-2.0-or-later
#pragma once

// Wait/hold time recording for the reference implementations' locks, in the
// same Log2Hist as kernel captures. Cheap by construction: each thread writes
// only its own histograms (found through a small thread-local cache, no shared
// cache line on the hot path) and they are merged when the run is read out.

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include <time.h>

#include "lockscope/capture/histogram.h"

namespace lockscope::scaling {

inline uint64_t monotonicNs() noexcept
{
    timespec ts{};
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return static_cast<uint64_t>(ts.tv_sec) * 1000000000ull + static_cast<uint64_t>(ts.tv_nsec);
}

// One lock class (e.g. "sem_array.lock"): every lock instance of the class
// records into it, as the kernel-side probes aggregate by lock class.
class LockProfile {
public:
    struct Slot {
        Log2Hist wait, hold;
    };

    LockProfile(std::string name, std::string type);
    LockProfile(const LockProfile&) = delete;
    LockProfile& operator=(const LockProfile&) = delete;

    const std::string& name() const { return name_; }
    const std::string& type() const { return type_; }

    // The calling thread's slot; the first call per thread registers it.
    Slot& local();
    // Merged over all threads; call when the recording threads are quiescent.
    Log2Hist wait() const;
    Log2Hist hold() const;

private:
    std::string name_, type_;
    uint64_t serial_;  // never reused, unlike addresses, so thread caches cannot go stale
    mutable std::mutex mutex_;
    std::vector<std::unique_ptr<Slot>> slots_;
};

// Wraps a lock (SpinLock, SpinRwLock, std::mutex, std::shared_mutex) and
// records wait and hold time per acquisition when given a profile; with a null
// profile it is the bare lock. Hold time is only meaningful for exclusive
// holders and for readers individually, which is what is recorded.
template <class Lock>
class Instrumented {
public:
    explicit Instrumented(LockProfile* profile = nullptr) : profile_(profile) {}

    void lock()
    {
        if (!profile_) {
            lock_.lock();
            return;
        }
        uint64_t t0 = monotonicNs();
        uint64_t acquired = t0;
        if (!lock_.try_lock()) {
            lock_.lock();
            acquired = monotonicNs();
        }
        auto& slot = profile_->local();
        slot.wait.add(acquired - t0);
        exclusiveSince_ = acquired;
    }
    void unlock()
    {
        if (profile_)
            profile_->local().hold.add(monotonicNs() - exclusiveSince_);
        lock_.unlock();
    }

    // Readers can overlap, so the acquisition time travels with the caller.
    uint64_t lock_shared()
    {
        if (!profile_) {
            lock_.lock_shared();
            return 0;
        }
        uint64_t t0 = monotonicNs();
        uint64_t acquired = t0;
        if (!lock_.try_lock_shared()) {
            lock_.lock_shared();
            acquired = monotonicNs();
        }
        profile_->local().wait.add(acquired - t0);
        return acquired;
    }
    void unlock_shared(uint64_t acquired)
    {
        if (profile_)
            profile_->local().hold.add(monotonicNs() - acquired);
        lock_.unlock_shared();
    }

private:
    Lock lock_;
    LockProfile* profile_;
    uint64_t exclusiveSince_ = 0;  // written only by the exclusive holder
};

// RAII helpers for the wrapper above.
template <class L>
class Guard {
public:
    explicit Guard(L& l) : l_(l) { l_.lock(); }
    ~Guard() { l_.unlock(); }
    Guard(const Guard&) = delete;
    Guard& operator=(const Guard&) = delete;

private:
    L& l_;
};

template <class L>
class SharedGuard {
public:
    explicit SharedGuard(L& l) : l_(l), since_(l_.lock_shared()) {}
    ~SharedGuard() { l_.unlock_shared(since_); }
    SharedGuard(const SharedGuard&) = delete;
    SharedGuard& operator=(const SharedGuard&) = delete;

private:
    L& l_;
    uint64_t since_;
};

} // namespace lockscope::scaling
