// SPDX-License-Identifier: GPL-2.0-or-later
#pragma once

// Userspace stand-ins for the kernel lock types the reference implementations
// model. Kernel spinlocks run with preemption off; userspace threads can be
// preempted while holding one, so the spinning loops fall back to
// sched_yield() after a short spin instead of burning a whole time slice
// behind a descheduled holder (the machine has fewer cores than threads).

#include <atomic>
#include <cstdint>

#include <sched.h>

namespace lockscope::scaling {

inline void cpuRelax() noexcept
{
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__)
    asm volatile("yield" ::: "memory");
#endif
}

// Spins briefly, then yields; shared by the spinning locks.
class Backoff {
public:
    void pause() noexcept
    {
        if (++spins_ < 64)
            cpuRelax();
        else
            sched_yield();
    }

private:
    unsigned spins_ = 0;
};

// Test-and-test-and-set spinlock (spinlock_t).
class SpinLock {
public:
    static constexpr const char* kType = "spinlock";

    bool try_lock() noexcept
    {
        return !locked_.load(std::memory_order_relaxed) && !locked_.exchange(true, std::memory_order_acquire);
    }
    void lock() noexcept
    {
        Backoff backoff;
        while (!try_lock())
            backoff.pause();
    }
    void unlock() noexcept { locked_.store(false, std::memory_order_release); }

private:
    std::atomic<bool> locked_{false};
};

// Spinning reader-writer lock (rwlock_t). A waiting writer stops new readers
// from entering so that a steady stream of readers cannot starve it.
class SpinRwLock {
public:
    static constexpr const char* kType = "rwlock";

    bool try_lock() noexcept
    {
        uint32_t s = state_.load(std::memory_order_relaxed);
        return (s & ~kWriterWaiting) == 0 &&
               state_.compare_exchange_strong(s, kWriter, std::memory_order_acquire, std::memory_order_relaxed);
    }
    void lock() noexcept
    {
        Backoff backoff;
        while (!try_lock()) {
            state_.fetch_or(kWriterWaiting, std::memory_order_relaxed);
            backoff.pause();
        }
    }
    void unlock() noexcept { state_.store(0, std::memory_order_release); }

    bool try_lock_shared() noexcept
    {
        uint32_t s = state_.load(std::memory_order_relaxed);
        return (s & (kWriter | kWriterWaiting)) == 0 &&
               state_.compare_exchange_strong(s, s + 1, std::memory_order_acquire, std::memory_order_relaxed);
    }
    void lock_shared() noexcept
    {
        Backoff backoff;
        while (!try_lock_shared())
            backoff.pause();
    }
    void unlock_shared() noexcept { state_.fetch_sub(1, std::memory_order_release); }

private:
    static constexpr uint32_t kWriter = 1u << 31;
    static constexpr uint32_t kWriterWaiting = 1u << 30;
    std::atomic<uint32_t> state_{0};
};

} // namespace lockscope::scaling
