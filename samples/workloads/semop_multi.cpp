// SPDX-License-Identifier: GPL-2.0-or-later
// semop-multi: N threads doing semop() on M semaphores of one System V set, the
// benchmark of "ipc,sem: do not hold ipc lock more than necessary". Single-sop
// calls take only the per-semaphore lock; --multi issues nsops > 1 ("complex")
// operations, which the kernel serializes on the whole-array lock
// (sem_perm.lock), so that mode is the one that contends a kernel spinlock.

#include <sys/sem.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <thread>
#include <vector>

#include "common/workload.h"
#include "sysv_sem.h"

using namespace lockscope::workload;

namespace {

struct alignas(64) Worker {
    uint64_t ops = 0;
    int error = 0;
};

uint64_t nextRandom(uint64_t& state)
{
    state ^= state << 13;
    state ^= state >> 7;
    state ^= state << 17;
    return state;
}

// Every call adds before it subtracts on the same semaphores, so values never
// drop below the thread's own contribution and no call ever blocks: the
// measured cost is the locking, not sleeping.
void run(int semid, int nsems, int nsops, unsigned index, const StopControl& stop, Worker& w)
{
    uint64_t rng = 0x9E3779B97F4A7C15ull * (index + 1);
    std::vector<sembuf> up(static_cast<size_t>(nsops)), down(static_cast<size_t>(nsops));
    while (!stop.stopping()) {
        auto first = static_cast<int>(nextRandom(rng) % static_cast<uint64_t>(nsems));
        for (int k = 0; k < nsops; ++k) {
            auto num = static_cast<unsigned short>((first + k) % nsems);
            up[static_cast<size_t>(k)] = {num, 1, 0};
            down[static_cast<size_t>(k)] = {num, -1, 0};
        }
        if (semop(semid, up.data(), static_cast<size_t>(nsops)) < 0 ||
            semop(semid, down.data(), static_cast<size_t>(nsops)) < 0) {
            w.error = errno;
            return;
        }
        w.ops += 2;
    }
}

} // namespace

int main(int argc, char** argv)
{
    int64_t threads = 8, sems = 16, nsops = 2;
    double duration = 5.0;
    bool multi = false;
    Flags flags("semop-multi",
                "N threads doing semop() on M System V semaphores for a fixed time; --multi uses\n"
                "multi-sop (complex) operations that take the whole-array lock.");
    flags.addInt("threads", &threads, 1, 4096, "worker threads");
    flags.addInt("sems", &sems, 1, 32000, "semaphores in the set");
    flags.addDouble("duration", &duration, 0.01, 86400, "seconds to run");
    flags.addSwitch("multi", &multi, "issue nsops > 1 operations (whole-array lock)");
    flags.addInt("nsops", &nsops, 2, 500, "operations per call in --multi mode");
    flags.parse(argc, argv);
    if (!multi)
        nsops = 1;
    else if (nsops > sems)
        flags.usageError("--nsops " + std::to_string(nsops) + " exceeds --sems " + std::to_string(sems) +
                         "; --multi needs at least nsops semaphores");

    StopControl stop;
    SemSet set(flags.program(), static_cast<int>(sems));
    set.setAll(0);

    std::vector<Worker> workers(static_cast<size_t>(threads));
    std::vector<std::thread> pool;
    auto start = Clock::now();
    for (unsigned i = 0; i < workers.size(); ++i)
        pool.emplace_back(run, set.id(), static_cast<int>(sems), static_cast<int>(nsops), i, std::cref(stop),
                          std::ref(workers[i]));
    bool interrupted = stop.waitForStop(duration);
    for (auto& t : pool)
        t.join();
    double elapsed = secondsSince(start);
    set.remove();

    uint64_t ops = 0;
    for (const auto& w : workers) {
        if (w.error) {
            errno = w.error;
            die(flags.program(), "semop");
        }
        ops += w.ops;
    }
    double rate = static_cast<double>(ops) / elapsed;
    const char* mode = multi ? "multi" : "single";
    printTable({{"mode", "threads", "semaphores", "nsops", "ops", "seconds", "ops/s"},
                {mode, std::to_string(threads), std::to_string(sems), std::to_string(nsops),
                 std::to_string(ops), formatNumber(elapsed, 2), formatNumber(rate)}});
    printResult({{"benchmark", "semop-multi"},
                 {"mode", mode},
                 {"ops", ops},
                 {"ops_per_sec", rate},
                 {"threads", threads},
                 {"semaphores", sems},
                 {"nsops", nsops},
                 {"duration_s", elapsed},
                 {"interrupted", interrupted}});
    return 0;
}
