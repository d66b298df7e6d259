// SPDX-License-Identifier: GPL-2.0-or-later
#pragma once

// Real spinlock contention for any box's tests, and whether this kernel
// reports it at all.
//
// lock:contention_begin fires for a spinning wait only when the qspinlock
// slow path queues: with paravirt spinlocks (KVM's pv_ops) every slow path
// does; on bare qspinlocks a lone waiter spins on the pending bit without an
// event, which with 2 CPUs is every wait; under a hypervisor without
// paravirt spinlocks the guest uses a test-and-set lock that has no event.
// Tests that need spinlock waits ask spinWaitsInvisible() first and skip
// with its reason.

#include <linux/perf_event.h>
#include <sys/ioctl.h>
#include <sys/ipc.h>
#include <sys/sem.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdint>
#include <fstream>
#include <stdexcept>
#include <string>
#include <system_error>
#include <thread>
#include <vector>

namespace lockscope::test {

// threads x iterations pairs of semop() calls with nsops = 2 on one System V
// set: multi-sop operations take the whole-array lock (sem_array's
// spinlock). Returns the number of semop calls made.
inline uint64_t semopContention(unsigned threads, unsigned iterations)
{
    const int id = semget(IPC_PRIVATE, 8, IPC_CREAT | 0600);
    if (id < 0)
        throw std::runtime_error(std::string("semget: ") + std::system_category().message(errno));
    std::atomic<uint64_t> calls { 0 };
    std::vector<std::thread> pool;
    for (unsigned t = 0; t < threads; ++t) {
        pool.emplace_back([&, t] {
            const auto a = static_cast<unsigned short>(t % 8);
            const auto b = static_cast<unsigned short>((t + 1) % 8);
            sembuf up[2] = { { a, 1, 0 }, { b, 1, 0 } };
            sembuf down[2] = { { a, -1, 0 }, { b, -1, 0 } };
            for (unsigned i = 0; i < iterations; ++i) {
                if (semop(id, up, 2) == 0)
                    calls.fetch_add(1, std::memory_order_relaxed);
                if (semop(id, down, 2) == 0)
                    calls.fetch_add(1, std::memory_order_relaxed);
            }
        });
    }
    for (auto& th : pool)
        th.join();
    semctl(id, 0, IPC_RMID);
    return calls.load();
}

namespace detail {

inline std::string tracepointId(const char* name)
{
    for (const char* root : { "/sys/kernel/tracing", "/sys/kernel/debug/tracing" }) {
        std::ifstream in(std::string(root) + "/events/" + name + "/id");
        std::string id;
        if (in >> id)
            return id;
    }
    return {};
}

// Counts this process's spinning contention_begin events (flags == SPIN
// only) while 4 threads contend one semaphore array's lock.
inline std::string checkSpinWaits()
{
    const std::string id = tracepointId("lock/contention_begin");
    if (id.empty())
        return "no lock:contention_begin tracepoint in tracefs";
    perf_event_attr attr {};
    attr.size = sizeof attr;
    attr.type = PERF_TYPE_TRACEPOINT;
    attr.config = std::stoull(id);
    attr.inherit = 1; // the threads semopContention starts
    attr.disabled = 1;
    const int fd = static_cast<int>(syscall(SYS_perf_event_open, &attr, 0, -1, -1, PERF_FLAG_FD_CLOEXEC));
    if (fd < 0)
        return std::string("perf_event_open(lock:contention_begin): ") + std::system_category().message(errno);
    const char filter[] = "flags == 1";
    if (ioctl(fd, PERF_EVENT_IOC_SET_FILTER, filter) != 0) {
        close(fd);
        return std::string("lock:contention_begin filter: ") + std::system_category().message(errno);
    }
    ioctl(fd, PERF_EVENT_IOC_ENABLE, 0);
    const uint64_t calls = semopContention(4, 20000);
    ioctl(fd, PERF_EVENT_IOC_DISABLE, 0);
    uint64_t waits = 0;
    const bool read_ok = read(fd, &waits, sizeof waits) == sizeof waits;
    close(fd);
    if (!read_ok)
        return "reading the lock:contention_begin count failed";
    if (waits >= 20)
        return {};
    return "this kernel reports no spinning lock waits (" + std::to_string(waits) + " spinning contention_begin in " +
           std::to_string(calls) + " semop calls of 4 threads on one array lock, " +
           std::to_string(std::thread::hardware_concurrency()) +
           " CPUs): without paravirt spinlocks a lone waiter spins on the qspinlock pending bit, or a hypervisor's "
           "test-and-set lock, which fire no event";
}

} // namespace detail

// Empty when spinning lock waits reach lock:contention_begin here; else why
// not (checked once per process, ~0.1-0.5 s).
inline const std::string& spinWaitsInvisible()
{
    static const std::string reason = detail::checkSpinWaits();
    return reason;
}

} // namespace lockscope::test

// Skips the test, with the reason, where the kernel shows no spinlock waits.
#define LOCKSCOPE_REQUIRE_SPIN_WAITS()                                                                        \
    do {                                                                                                     \
        if (const auto& why = ::lockscope::test::spinWaitsInvisible(); !why.empty())                         \
            GTEST_SKIP() << "skipped: " << why;                                                              \
    } while (0)
