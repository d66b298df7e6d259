// SPDX-License-Identifier: GPL-2.0-or-later
// timer-stress: N processes, each owning K POSIX timers, calling
// timer_gettime() in a loop: the benchmark of "posix-timers: RCU conversion"
// (the timer id lookup used to take a global hash spinlock on every call).
// Kernels with that change look timers up under RCU and lock only the timer,
// so separate processes no longer share a lock; --threads T makes T threads of
// each process share its timers, and so each timer's it_lock.

#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <csignal>
#include <cstdint>
#include <ctime>
#include <string>
#include <thread>
#include <vector>

#include "common/workload.h"

using namespace lockscope::workload;

namespace {

struct alignas(64) Slot {
    std::atomic<uint64_t> ops{0};
    std::atomic<int> error{0};
};

struct Shared {
    std::atomic<bool> stop{false};
    std::atomic<int> ready{0};
};

// Calls timer_gettime() round-robin over the process's timers until told to stop.
void gettimeLoop(Shared* shared, Slot* slot, const std::vector<timer_t>& timers, size_t first)
{
    size_t next = first % timers.size();
    while (!shared->stop.load(std::memory_order_relaxed)) {
        for (int i = 0; i < 64; ++i) {
            itimerspec cur{};
            if (timer_gettime(timers[next], &cur) < 0) {
                slot->error = errno;
                shared->stop = true;
                return;
            }
            next = next + 1 == timers.size() ? 0 : next + 1;
        }
        slot->ops.fetch_add(64, std::memory_order_relaxed);
    }
}

[[noreturn]] void child(Shared* shared, Slot* slot, int64_t ntimers, int64_t threads)
{
    // Never outlive the parent, even if it is killed with SIGKILL.
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    std::vector<timer_t> timers(static_cast<size_t>(ntimers));
    for (auto& t : timers) {
        sigevent ev{};
        ev.sigev_notify = SIGEV_NONE;
        if (timer_create(CLOCK_MONOTONIC, &ev, &t) < 0) {
            slot->error = errno;
            shared->ready.fetch_add(1);
            _exit(1);
        }
        itimerspec spec{{1000, 0}, {1000, 0}};  // armed, so gettime computes a remaining time
        timer_settime(t, 0, &spec, nullptr);
    }
    // Threads of one process share its timers, and so each timer's it_lock.
    std::vector<std::thread> extra;
    for (int64_t t = 1; t < threads; ++t)
        extra.emplace_back(gettimeLoop, shared, slot, std::cref(timers), static_cast<size_t>(t));
    shared->ready.fetch_add(1);
    gettimeLoop(shared, slot, timers, 0);
    for (auto& t : extra)
        t.join();
    _exit(slot->error.load() ? 1 : 0);
}

double seconds(const timeval& tv)
{
    return static_cast<double>(tv.tv_sec) + static_cast<double>(tv.tv_usec) / 1e6;
}

// The stop flag and one counter slot per process, in memory the children share.
struct SharedBlock {
    void* mem = nullptr;
    size_t bytes = 0;
    Shared* shared = nullptr;
    Slot* slots = nullptr;
};

SharedBlock mapShared(int64_t procs, const std::string& program)
{
    SharedBlock b;
    // Slots start on their own cache line (mmap memory is page aligned).
    const size_t slotsOffset = (sizeof(Shared) + alignof(Slot) - 1) / alignof(Slot) * alignof(Slot);
    b.bytes = slotsOffset + static_cast<size_t>(procs) * sizeof(Slot);
    b.mem = mmap(nullptr, b.bytes, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (b.mem == MAP_FAILED)
        die(program, "mmap");
    b.shared = new (b.mem) Shared;
    b.slots = reinterpret_cast<Slot*>(static_cast<char*>(b.mem) + slotsOffset);
    for (int64_t i = 0; i < procs; ++i)
        new (&b.slots[i]) Slot;
    return b;
}

// Forks the processes; a failed fork stops and reaps the ones started, then dies.
std::vector<pid_t> startChildren(const SharedBlock& b, int64_t procs, int64_t ntimers, int64_t threads,
                                 const std::string& program)
{
    std::vector<pid_t> children;
    for (int64_t i = 0; i < procs; ++i) {
        pid_t pid = fork();
        if (pid < 0) {
            b.shared->stop = true;
            int saved = errno;
            for (pid_t c : children)
                waitpid(c, nullptr, 0);
            errno = saved;
            die(program, "fork");
        }
        if (pid == 0)
            child(b.shared, &b.slots[i], ntimers, threads);
        children.push_back(pid);
    }
    return children;
}

uint64_t totalOps(const SharedBlock& b, int64_t procs)
{
    uint64_t total = 0;
    for (int64_t i = 0; i < procs; ++i)
        total += b.slots[i].ops.load();
    return total;
}

// Stops the children and waits for them; how many failed. A call that failed
// in a child ends the program with its errno.
int stopChildren(const SharedBlock& b, const std::vector<pid_t>& children, int64_t procs,
                 const std::string& program)
{
    b.shared->stop = true;
    int failed = 0;
    for (pid_t c : children) {
        int status = 0;
        waitpid(c, &status, 0);
        if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
            ++failed;
    }
    for (int64_t i = 0; i < procs; ++i)
        if (b.slots[i].error) {
            errno = b.slots[i].error;
            die(program, "timer_create/timer_gettime in a child");
        }
    return failed;
}

void report(int64_t procs, int64_t threads, int64_t ntimers, uint64_t ops, double elapsed, bool interrupted)
{
    rusage ru{};
    getrusage(RUSAGE_CHILDREN, &ru);
    double rate = static_cast<double>(ops) / elapsed;
    printTable({{"procs", "threads/proc", "timers/proc", "calls", "seconds", "calls/s", "user s", "sys s"},
                {std::to_string(procs), std::to_string(threads), std::to_string(ntimers), std::to_string(ops), formatNumber(elapsed, 2),
                 formatNumber(rate), formatNumber(seconds(ru.ru_utime), 2),
                 formatNumber(seconds(ru.ru_stime), 2)}});
    printResult({{"benchmark", "timer-stress"},
                 {"ops", ops},
                 {"ops_per_sec", rate},
                 {"procs", procs},
                 {"threads_per_proc", threads},
                 {"timers_per_proc", ntimers},
                 {"user_s", seconds(ru.ru_utime)},
                 {"sys_s", seconds(ru.ru_stime)},
                 {"duration_s", elapsed},
                 {"interrupted", interrupted}});
}

} // namespace

int main(int argc, char** argv)
{
    int64_t procs = 2 * sysconf(_SC_NPROCESSORS_ONLN), ntimers = 16, threads = 1;
    double duration = 5.0;
    Flags flags("timer-stress",
                "N processes (of T threads), each with K POSIX timers, calling timer_gettime() in a loop\n"
                "for a fixed time; reports calls/s and the CPU (user/sys) the children used.");
    flags.addInt("procs", &procs, 1, 4096, "processes");
    flags.addInt("timers", &ntimers, 1, 100000, "timers per process");
    flags.addInt("threads", &threads, 1, 1024,
                 "threads per process, sharing its timers (> 1 contends the per-timer lock)");
    flags.addDouble("duration", &duration, 0.01, 86400, "seconds to run");
    flags.parse(argc, argv);

    StopControl stop;
    const SharedBlock block = mapShared(procs, flags.program());
    const std::vector<pid_t> children = startChildren(block, procs, ntimers, threads, flags.program());
    while (block.shared->ready.load() < procs && !stop.pollSignal())
        usleep(1000);
    auto start = Clock::now();
    const uint64_t base = totalOps(block, procs);
    bool interrupted = stop.stopping() || stop.waitForStop(duration);
    const uint64_t total = totalOps(block, procs);
    double elapsed = secondsSince(start);
    if (int failed = stopChildren(block, children, procs, flags.program())) {
        std::fprintf(stderr, "%s: %d child process(es) failed\n", flags.program().c_str(), failed);
        return kExitFailure;
    }
    report(procs, threads, ntimers, total - base, elapsed, interrupted);
    munmap(block.mem, block.bytes);
    return 0;
}
