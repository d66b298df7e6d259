// SPDX-License-Identifier: GPL-2.0-or-later
// sem-postwait: pairs of threads ping-pong through two semaphores of one shared
// System V set (post with +1, wait with semtimedop -1), the benchmark of
// "ipc/sem.c: optimize semtimedop" (per-semaphore locks and pending lists).
// Every cycle blocks one thread and wakes it from another, so it exercises the
// sleep/wakeup path of the semaphore code rather than just its locks.
// --sleepers K adds K threads asleep on K more semaphores of the same set that
// nobody posts (as in Chris Mason's sembench): before the change every post
// re-tried all of them under the array lock; after it they cost nothing.

#include <sys/sem.h>

#include <cerrno>
#include <cstdint>
#include <ctime>
#include <thread>
#include <vector>

#include "common/workload.h"
#include "sysv_sem.h"

using namespace lockscope::workload;

namespace {

struct alignas(64) Side {
    uint64_t cycles = 0;
    int error = 0;
};

// Returns false once the set is gone or the run is stopping.
bool semStep(int semid, unsigned short num, short op, const StopControl& stop, Side& side)
{
    sembuf sop{num, op, 0};
    // A finite timeout lets a waiter notice the stop flag even if its partner
    // has already left; removal of the set (EIDRM) is the usual way out.
    timespec timeout{0, 200 * 1000 * 1000};
    while (semtimedop(semid, &sop, 1, op < 0 ? &timeout : nullptr) < 0) {
        if (errno == EINTR || (errno == EAGAIN && !stop.stopping()))
            continue;
        if (!stop.stopping() || (errno != EIDRM && errno != EINVAL && errno != EAGAIN))
            side.error = errno;
        return false;
    }
    return true;
}

void pinger(int semid, unsigned pair, const StopControl& stop, Side& side)
{
    auto ping = static_cast<unsigned short>(2 * pair), pong = static_cast<unsigned short>(2 * pair + 1);
    while (!stop.stopping()) {
        if (!semStep(semid, ping, 1, stop, side) || !semStep(semid, pong, -1, stop, side))
            return;
        ++side.cycles;
    }
}

void ponger(int semid, unsigned pair, const StopControl& stop, Side& side)
{
    auto ping = static_cast<unsigned short>(2 * pair), pong = static_cast<unsigned short>(2 * pair + 1);
    while (!stop.stopping()) {
        if (!semStep(semid, ping, -1, stop, side) || !semStep(semid, pong, 1, stop, side))
            return;
        ++side.cycles;
    }
}

// Sleeps on a semaphore nobody posts until the set is removed.
void idleSleeper(int semid, unsigned short num, const StopControl& stop, Side& side)
{
    if (semStep(semid, num, -1, stop, side))
        side.error = EPROTO;  // granted a semaphore that was never posted
}

} // namespace

int main(int argc, char** argv)
{
    int64_t pairs = 4;
    int64_t sleepers = 0;
    double duration = 5.0;
    Flags flags("sem-postwait",
                "Pairs of threads ping-ponging through semaphores of one System V set: each cycle\n"
                "is a post (+1) and a blocking semtimedop wait (-1) woken by the partner.");
    flags.addInt("pairs", &pairs, 1, 2048, "thread pairs (2 threads, 2 semaphores each)");
    flags.addInt("sleepers", &sleepers, 0, 4096, "extra threads asleep on semaphores of the set nobody posts");
    flags.addDouble("duration", &duration, 0.01, 86400, "seconds to run");
    flags.parse(argc, argv);

    StopControl stop;
    const auto nsems = static_cast<int>(2 * pairs + sleepers);
    SemSet set(flags.program(), nsems);
    set.setAll(0);

    std::vector<Side> pings(static_cast<size_t>(pairs)), pongs(static_cast<size_t>(pairs));
    std::vector<Side> idle(static_cast<size_t>(sleepers));
    std::vector<std::thread> pool;
    for (unsigned i = 0; i < static_cast<unsigned>(sleepers); ++i)
        pool.emplace_back(idleSleeper, set.id(), static_cast<unsigned short>(2 * pairs + i), std::cref(stop),
                          std::ref(idle[i]));
    // The pairs start once every idle sleeper is queued on the set (GETNCNT:
    // tasks waiting for the value to grow).
    for (int i = static_cast<int>(2 * pairs); i < nsems && !stop.stopping(); ++i)
        while (semctl(set.id(), i, GETNCNT) < 1 && !stop.stopping())
            std::this_thread::yield();
    auto start = Clock::now();
    for (unsigned p = 0; p < static_cast<unsigned>(pairs); ++p) {
        pool.emplace_back(pinger, set.id(), p, std::cref(stop), std::ref(pings[p]));
        pool.emplace_back(ponger, set.id(), p, std::cref(stop), std::ref(pongs[p]));
    }
    bool interrupted = stop.waitForStop(duration);
    double elapsed = secondsSince(start);
    set.remove();  // wakes every blocked waiter with EIDRM
    for (auto& t : pool)
        t.join();

    uint64_t cycles = 0;
    for (size_t p = 0; p < pings.size(); ++p) {
        for (const Side* s : {&pings[p], &pongs[p]})
            if (s->error) {
                errno = s->error;
                die(flags.program(), "semtimedop");
            }
        cycles += pings[p].cycles;
    }
    for (const Side& s : idle)
        if (s.error) {
            errno = s.error;
            die(flags.program(), "idle semtimedop");
        }
    uint64_t ops = 4 * cycles;  // two posts and two waits per cycle
    double rate = static_cast<double>(cycles) / elapsed;
    printTable({{"pairs", "sleepers", "threads", "cycles", "semops", "seconds", "cycles/s"},
                {std::to_string(pairs), std::to_string(sleepers), std::to_string(2 * pairs + sleepers),
                 std::to_string(cycles),
                 std::to_string(ops), formatNumber(elapsed, 2), formatNumber(rate)}});
    printResult({{"benchmark", "sem-postwait"},
                 {"ops", ops},
                 {"ops_per_sec", static_cast<double>(ops) / elapsed},
                 {"cycles", cycles},
                 {"cycles_per_sec", rate},
                 {"pairs", pairs},
                 {"sleepers", sleepers},
                 {"threads", 2 * pairs + sleepers},
                 {"semaphores", 2 * pairs + sleepers},
                 {"duration_s", elapsed},
                 {"interrupted", interrupted}});
    return 0;
}
