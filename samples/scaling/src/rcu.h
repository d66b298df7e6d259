// SPDX-License-Identifier: GPL-2.0-or-later
#pragma once

// Thin layer over liburcu (memb flavour). Threads register on first use and
// unregister when they exit. ThreadSanitizer cannot see liburcu's grace-period
// machinery (the library is not instrumented and uses membarrier), so under
// TSan the read-side unlock is published as a release and a completed grace
// period as an acquire on one token: exactly the ordering RCU guarantees.

#if defined(__SANITIZE_THREAD__)
#define LOCKSCOPE_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define LOCKSCOPE_TSAN 1
#endif
#endif

// Inline read-side primitives (as the kernel's are), except under TSan, where
// the library calls keep liburcu's own bookkeeping out of the instrumented code.
#if !defined(LOCKSCOPE_TSAN) && !defined(_LGPL_SOURCE)
#define _LGPL_SOURCE
#endif
#include <urcu/urcu-memb.h>

#ifdef LOCKSCOPE_TSAN
extern "C" void __tsan_acquire(void* addr);
extern "C" void __tsan_release(void* addr);
#endif

namespace lockscope::scaling::rcu {

void registerThread();
// Constant-initialized, so the hot-path check is one TLS load with no guard.
inline thread_local bool threadRegistered = false;
inline void ensureRegistered()
{
    if (__builtin_expect(!threadRegistered, 0))
        registerThread();
}

#ifdef LOCKSCOPE_TSAN
inline char gracePeriodToken;
#endif

inline void readLock()
{
    ensureRegistered();
    urcu_memb_read_lock();
}

inline void readUnlock()
{
#ifdef LOCKSCOPE_TSAN
    __tsan_release(&gracePeriodToken);
#endif
    urcu_memb_read_unlock();
}

inline void synchronize()
{
    ensureRegistered();
    urcu_memb_synchronize_rcu();
#ifdef LOCKSCOPE_TSAN
    __tsan_acquire(&gracePeriodToken);
#endif
}

// Publication of a pointer to readers and its read-side load.
template <class T>
inline T* dereference(T* const& p)
{
    return __atomic_load_n(&p, __ATOMIC_ACQUIRE);
}
template <class T>
inline void assign(T*& p, T* v)
{
    __atomic_store_n(&p, v, __ATOMIC_RELEASE);
}

class ReadGuard {
public:
    ReadGuard() { readLock(); }
    ~ReadGuard() { readUnlock(); }
    ReadGuard(const ReadGuard&) = delete;
    ReadGuard& operator=(const ReadGuard&) = delete;
};

} // namespace lockscope::scaling::rcu
