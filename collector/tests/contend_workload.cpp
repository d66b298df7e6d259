// SPDX-License-Identifier: GPL-2.0-or-later
// A contention workload for the end-to-end tests whose user stacks can be
// walked and named: built with frame pointers, every function the tests look
// for is extern "C" and noinline, and the semop mode enters the kernel from
// its own worker (inline syscall) rather than from libc's wrapper, which has
// no frame pointer and would hide its caller from a frame-pointer unwinder.
//
//   contend-workload mutex THREADS SECONDS  threads hammer one pthread mutex
//   contend-workload spin  THREADS SECONDS  threads hammer ls_test_spin_lock/unlock
//   contend-workload semop THREADS SECONDS  threads issue 2-sop semop() on one set,
//                                           which the kernel serializes on the array lock
//   contend-workload semctl THREADS SECONDS as semop, plus one thread reading the set
//                                           with semctl(GETALL): the same array lock,
//                                           contended from a second kernel caller
//   contend-workload mmap THREADS SECONDS   threads mmap, touch and munmap anonymous memory:
//                                           the process's mmap_lock, taken for writing
//   contend-workload filepos THREADS SECONDS threads read() one shared file descriptor a byte
//                                           at a time: its f_pos_lock, a mutex contended
//                                           10^5 times a second (reported on any kernel)
//   contend-workload filepos-3to1 THREADS SECONDS as filepos, but each thread calls read()
//                                           three times, then readv() once: one lock
//                                           from two call paths in a known 3:1 proportion
//   contend-workload filepos-bulk THREADS SECONDS as filepos on a 32 MiB file in /dev/shm, plus one thread that
//                                           every 50 ms reads it whole in one read(): ~10 ms
//                                           holding f_pos_lock, rare long waits among short ones
//   contend-workload filepos-chunk THREADS SECONDS threads read() the /dev/shm file 64 KiB at a
//                                           time: f_pos_lock held ~10 us a read, contended at a rate
//                                           a probe's own cost hardly changes
//
// Prints one line {"lockscope_result": {"ops": N, ...}} like the samples.
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <string>
#include <sys/ipc.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/sem.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <thread>
#include <unistd.h>
#include <vector>

#include "raw_syscall.h"

namespace {

std::atomic<bool> g_stop{false};
pthread_mutex_t g_mutex = PTHREAD_MUTEX_INITIALIZER;
uint64_t g_shared = 0;  // what the locks protect

// Inlined into the worker, so the user-mode instruction pointer the kernel
// sees is in ls_test_semop_worker itself.
__attribute__((always_inline)) inline long rawSemop(int semid, sembuf* sops, size_t nsops)
{
    return rawSyscall3(SYS_semop, semid, reinterpret_cast<long>(sops), static_cast<long>(nsops));
}

} // namespace

extern "C" {

// A test-and-set lock with the calling convention the uprobe lock specs
// expect: lock returns 0 once acquired.
struct ls_test_spin {
    std::atomic<int> locked{0};
};
ls_test_spin g_spin;

__attribute__((noinline)) int ls_test_spin_lock(ls_test_spin* l)
{
    for (unsigned tries = 0; l->locked.exchange(1, std::memory_order_acquire); ++tries)
        if (tries % 64 == 63)
            sched_yield();  // two CPUs: let a preempted holder run
    return 0;
}

__attribute__((noinline)) void ls_test_spin_unlock(ls_test_spin* l)
{
    l->locked.store(0, std::memory_order_release);
}

__attribute__((noinline)) uint64_t ls_test_mutex_worker()
{
    uint64_t ops = 0;
    while (!g_stop.load(std::memory_order_relaxed)) {
        pthread_mutex_lock(&g_mutex);
        for (int i = 0; i < 200; ++i)
            __atomic_fetch_add(&g_shared, 1, __ATOMIC_RELAXED);
        pthread_mutex_unlock(&g_mutex);
        ++ops;
    }
    return ops;
}

__attribute__((noinline)) uint64_t ls_test_spin_worker()
{
    uint64_t ops = 0;
    while (!g_stop.load(std::memory_order_relaxed)) {
        ls_test_spin_lock(&g_spin);
        for (int i = 0; i < 200; ++i)
            __atomic_fetch_add(&g_shared, 1, __ATOMIC_RELAXED);
        ls_test_spin_unlock(&g_spin);
        ++ops;
    }
    return ops;
}

// +1 then -1 on two semaphores: never blocks, always a complex operation.
__attribute__((noinline)) uint64_t ls_test_semop_worker(int semid, unsigned index)
{
    uint64_t ops = 0;
    auto a = static_cast<unsigned short>(index % 8), b = static_cast<unsigned short>((index + 1) % 8);
    sembuf up[2] = {{a, 1, 0}, {b, 1, 0}}, down[2] = {{a, -1, 0}, {b, -1, 0}};
    while (!g_stop.load(std::memory_order_relaxed)) {
        if (rawSemop(semid, up, 2) < 0 || rawSemop(semid, down, 2) < 0)
            return ops;
        ops += 2;
    }
    return ops;
}

// GETALL takes the whole-array lock too, from semctl's code instead of semop's.
__attribute__((noinline)) uint64_t ls_test_semctl_worker(int semid)
{
    uint64_t ops = 0;
    unsigned short values[8];
    while (!g_stop.load(std::memory_order_relaxed)) {
        if (semctl(semid, 0, GETALL, values) < 0)
            return ops;
        ++ops;
    }
    return ops;
}

// Every mmap and munmap takes the process's mmap_lock for writing.
__attribute__((noinline)) uint64_t ls_test_mmap_worker()
{
    constexpr size_t kLen = 64 * 1024;
    uint64_t ops = 0;
    while (!g_stop.load(std::memory_order_relaxed)) {
        void* p = mmap(nullptr, kLen, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (p == MAP_FAILED)
            return ops;
        static_cast<volatile char*>(p)[0] = 1;
        munmap(p, kLen);
        ++ops;
    }
    return ops;
}

// Every read() of a file descriptor other threads share takes its f_pos_lock.
__attribute__((noinline)) uint64_t ls_test_filepos_worker(int fd)
{
    uint64_t ops = 0;
    char c = 0;
    while (!g_stop.load(std::memory_order_relaxed)) {
        const ssize_t n = read(fd, &c, 1);
        if (n < 0 || (n == 0 && lseek(fd, 0, SEEK_SET) < 0))
            return ops;
        ops += static_cast<uint64_t>(n);
    }
    return ops;
}

// The same lock and the same work (one byte) from two syscalls, 3:1.
__attribute__((noinline)) uint64_t ls_test_filepos_3to1_worker(int fd)
{
    uint64_t ops = 0;
    char c = 0;
    iovec iov{&c, 1};
    while (!g_stop.load(std::memory_order_relaxed)) {
        const ssize_t n = (ops & 3) == 3 ? readv(fd, &iov, 1) : read(fd, &c, 1);
        if (n < 0 || (n == 0 && lseek(fd, 0, SEEK_SET) < 0))
            return ops;
        ++ops;
    }
    return ops;
}

// 64 KiB a read(): f_pos_lock held ~10 us for the copy, so a probe's
// ~0.2 us on the contended path hardly moves the contention rate (the
// sampled agent's test compares an observer that is there part of the time
// with one that is there all the time).
__attribute__((noinline)) uint64_t ls_test_filepos_chunk_worker(int fd)
{
    std::vector<char> buf(size_t { 64 } << 10, 1);
    uint64_t ops = 0;
    while (!g_stop.load(std::memory_order_relaxed)) {
        const ssize_t n = read(fd, buf.data(), buf.size());
        if (n < 0 || (n == 0 && lseek(fd, 0, SEEK_SET) < 0))
            return ops;
        ++ops;
    }
    return ops;
}

// One read() of the whole file every 50 ms: f_pos_lock held for the copy
// (running, not asleep: a waiter spins on it as long as it can).
__attribute__((noinline)) uint64_t ls_test_bulk_worker(int fd, size_t size)
{
    std::vector<char> buf(size, 1); // touched: the copy is not slowed by first faults
    uint64_t ops = 0;
    while (!g_stop.load(std::memory_order_relaxed)) {
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
        if (lseek(fd, 0, SEEK_SET) < 0 || read(fd, buf.data(), size) < 0)
            return ops;
        ++ops;
    }
    return ops;
}

} // extern "C"

namespace {

constexpr size_t kBulkBytes = size_t { 32 } << 20;

// A file of kBulkBytes in /dev/shm (memory), unlinked once open. Opened by
// path: a memfd is no opened file and has no f_pos_lock (FMODE_ATOMIC_POS).
int bulkFile()
{
    char path[] = "/dev/shm/ls-test-bulk-XXXXXX";
    const int fd = mkostemp(path, O_CLOEXEC);
    if (fd < 0)
        return -1;
    unlink(path);
    const std::vector<char> chunk(size_t { 1 } << 20, 'x');
    for (size_t done = 0; done < kBulkBytes; done += chunk.size())
        if (write(fd, chunk.data(), chunk.size()) != static_cast<ssize_t>(chunk.size())) {
            close(fd);
            return -1;
        }
    return fd;
}

} // namespace

int main(int argc, char** argv)
{
    if (argc != 4) {
        std::fprintf(stderr, "usage: %s mutex|spin|semop|semctl|mmap|filepos|filepos-3to1|filepos-bulk|filepos-chunk THREADS SECONDS\n", argv[0]);
        return 2;
    }
    const std::string mode = argv[1];
    const int threads = std::atoi(argv[2]);
    const double seconds = std::atof(argv[3]);
    const bool sem = mode == "semop" || mode == "semctl";
    const bool bulk = mode == "filepos-bulk" || mode == "filepos-chunk";
    const bool filepos = mode == "filepos" || mode == "filepos-3to1";
    if ((mode != "mutex" && mode != "spin" && mode != "mmap" && !filepos && !sem && !bulk) || threads < 1
        || threads > 256 || !(seconds > 0)) {
        std::fprintf(stderr,
            "%s: bad arguments (mode mutex|spin|semop|semctl|mmap|filepos|filepos-3to1|filepos-bulk|filepos-chunk, THREADS 1..256, SECONDS > 0)\n",
                     argv[0]);
        return 2;
    }
    int semid = -1;
    if (sem) {
        semid = semget(IPC_PRIVATE, 8, IPC_CREAT | 0600);
        if (semid < 0) {
            std::fprintf(stderr, "%s: semget: %s\n", argv[0], std::strerror(errno));
            return 1;
        }
    }
    const int fd = filepos ? open("/proc/self/exe", O_RDONLY | O_CLOEXEC) : bulk ? bulkFile() : -1;
    if ((filepos || bulk) && fd < 0) {
        std::fprintf(stderr, "%s: %s: %s\n", argv[0], bulk ? "/dev/shm file" : "open /proc/self/exe", std::strerror(errno));
        return 1;
    }
    const int readers = mode == "semctl" || mode == "filepos-bulk" ? 1 : 0;
    std::vector<uint64_t> ops(static_cast<size_t>(threads + readers));
    std::vector<std::thread> pool;
    const auto start = std::chrono::steady_clock::now();
    for (int t = 0; t < threads + readers; ++t)
        pool.emplace_back([&, t] {
            auto& n = ops[static_cast<size_t>(t)];
            if (t >= threads && bulk)
                n = ls_test_bulk_worker(fd, kBulkBytes);
            else if (t >= threads)
                n = ls_test_semctl_worker(semid);
            else if (mode == "mutex")
                n = ls_test_mutex_worker();
            else if (mode == "spin")
                n = ls_test_spin_worker();
            else if (mode == "mmap")
                n = ls_test_mmap_worker();
            else if (mode == "filepos-chunk")
                n = ls_test_filepos_chunk_worker(fd);
            else if (mode == "filepos" || bulk)
                n = ls_test_filepos_worker(fd);
            else if (mode == "filepos-3to1")
                n = ls_test_filepos_3to1_worker(fd);
            else
                n = ls_test_semop_worker(semid, static_cast<unsigned>(t));
        });
    std::this_thread::sleep_for(std::chrono::duration<double>(seconds));
    g_stop = true;
    for (auto& th : pool)
        th.join();
    const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (semid >= 0)
        semctl(semid, 0, IPC_RMID);
    if (fd >= 0)
        close(fd);
    uint64_t total = 0;
    for (uint64_t n : ops)
        total += n;
    std::printf("{\"lockscope_result\": {\"benchmark\": \"contend-%s\", \"ops\": %llu, \"ops_per_sec\": %.0f, "
                "\"threads\": %d}}\n",
                mode.c_str(), static_cast<unsigned long long>(total), static_cast<double>(total) / elapsed, threads);
    return total > 0 ? 0 : 1;
}
