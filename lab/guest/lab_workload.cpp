// SPDX-License-Identifier: GPL-2.0-or-later
// lockscope-lab-workload: exact-count kernel lock traffic for the lab's probe
// checks. Unlike the samples (which run for a duration), every mode makes a
// known number of system calls, so a probe's event count can be checked
// exactly:
//   timers: THREADS threads x OPS timer_gettime() on one shared POSIX timer
//           (each goes through __lock_timer and the timer's it_lock)
//   sem:    THREADS threads x OPS (semop -1, semop +1) on one SysV semaphore
//           (each semop takes the semaphore's spinlock via sem_lock)
// Prints one line {"lockscope_result": {...}} with the counts and timing.
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <string>
#include <thread>
#include <vector>

#include <csignal>
#include <sys/ipc.h>
#include <sys/sem.h>

namespace {

[[noreturn]] void usage(const char* why)
{
    std::fprintf(stderr,
                 "lockscope-lab-workload: %s\n"
                 "usage: lockscope-lab-workload timers|sem [--threads N] [--ops N]\n",
                 why);
    std::exit(2);
}

unsigned long parseCount(const char* flag, const char* text)
{
    char* end = nullptr;
    errno = 0;
    unsigned long v = std::strtoul(text, &end, 10);
    if (errno != 0 || end == text || *end != '\0' || v == 0 || v > 100000000ul) {
        std::string msg = std::string(flag) + " '" + text + "': expected a count from 1 to 100000000";
        usage(msg.c_str());
    }
    return v;
}

double now()
{
    timespec ts{};
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

int runTimers(unsigned long threads, unsigned long ops, unsigned long& failures)
{
    sigevent sev{};
    sev.sigev_notify = SIGEV_NONE;
    timer_t timer{};
    if (timer_create(CLOCK_MONOTONIC, &sev, &timer) != 0) {
        std::fprintf(stderr, "lockscope-lab-workload: timer_create: %s\n", std::strerror(errno));
        return 1;
    }
    std::vector<unsigned long> errs(threads, 0);
    std::vector<std::thread> pool;
    for (unsigned long t = 0; t < threads; ++t) {
        pool.emplace_back([&, t] {
            itimerspec value{};
            for (unsigned long i = 0; i < ops; ++i) {
                if (timer_gettime(timer, &value) != 0)
                    ++errs[t];
            }
        });
    }
    for (auto& th : pool)
        th.join();
    timer_delete(timer);
    for (auto e : errs)
        failures += e;
    return 0;
}

int runSem(unsigned long threads, unsigned long ops, unsigned long& failures)
{
    int id = semget(IPC_PRIVATE, 1, IPC_CREAT | 0600);
    if (id < 0) {
        std::fprintf(stderr, "lockscope-lab-workload: semget: %s\n", std::strerror(errno));
        return 1;
    }
    // SETVAL through semctl counts as no semop; start at 1 so one thread at a time holds it.
    if (semctl(id, 0, SETVAL, 1) != 0) {
        std::fprintf(stderr, "lockscope-lab-workload: semctl SETVAL: %s\n", std::strerror(errno));
        semctl(id, 0, IPC_RMID);
        return 1;
    }
    std::vector<unsigned long> errs(threads, 0);
    std::vector<std::thread> pool;
    for (unsigned long t = 0; t < threads; ++t) {
        pool.emplace_back([&, t] {
            sembuf down{0, -1, 0};
            sembuf up{0, 1, 0};
            for (unsigned long i = 0; i < ops; ++i) {
                if (semop(id, &down, 1) != 0)
                    ++errs[t];
                if (semop(id, &up, 1) != 0)
                    ++errs[t];
            }
        });
    }
    for (auto& th : pool)
        th.join();
    semctl(id, 0, IPC_RMID);
    for (auto e : errs)
        failures += e;
    return 0;
}

} // namespace

int main(int argc, char** argv)
{
    if (argc < 2)
        usage("missing mode");
    std::string mode = argv[1];
    if (mode == "--help" || mode == "-h") {
        std::printf("usage: lockscope-lab-workload timers|sem [--threads N] [--ops N]\n");
        return 0;
    }
    if (mode != "timers" && mode != "sem")
        usage(("unknown mode '" + mode + "'").c_str());
    unsigned long threads = 2;
    unsigned long ops = 10000;
    for (int i = 2; i < argc; ++i) {
        std::string flag = argv[i];
        if (i + 1 >= argc)
            usage((flag + " needs a value").c_str());
        if (flag == "--threads")
            threads = parseCount("--threads", argv[++i]);
        else if (flag == "--ops")
            ops = parseCount("--ops", argv[++i]);
        else
            usage(("unknown option '" + flag + "'").c_str());
    }
    if (threads > 1024)
        usage("--threads: at most 1024");
    unsigned long failures = 0;
    double t0 = now();
    int rc = mode == "timers" ? runTimers(threads, ops, failures) : runSem(threads, ops, failures);
    double elapsed = now() - t0;
    if (rc != 0)
        return rc;
    // Syscalls made by the measured loop: one per timer op, two per sem op.
    unsigned long calls = threads * ops * (mode == "sem" ? 2 : 1);
    std::printf("{\"lockscope_result\": {\"workload\": \"%s\", \"threads\": %lu, \"ops_per_thread\": %lu, "
                "\"syscalls\": %lu, \"errors\": %lu, \"seconds\": %.6f, \"ns_per_syscall\": %.1f}}\n",
                mode.c_str(), threads, ops, calls, failures, elapsed,
                elapsed * 1e9 / static_cast<double>(calls));
    return failures == 0 ? 0 : 1;
}
