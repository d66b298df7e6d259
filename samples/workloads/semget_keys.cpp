// SPDX-License-Identifier: GPL-2.0-or-later
// semget-keys: for each KEYS value, create KEYS semaphore sets with
// semget(key, IPC_CREAT) and then look them all up again (lookup only), timing
// the total and the slowest single call: the benchmark of "ipc: rhashtable for
// ipc keys" (the key lookup used to scan every id linearly, so its cost grew
// with the number of existing sets). --process-per-call runs each call in a
// fresh child process as the original measurement also did.

#include <sys/ipc.h>
#include <sys/mman.h>
#include <sys/sem.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <random>
#include <vector>

#include "common/workload.h"

using namespace lockscope::workload;

namespace {

struct Timed {
    int result = -1;
    int error = 0;
    uint64_t ns = 0;
};

Timed timedSemget(key_t key, int flags)
{
    Timed t;
    uint64_t begin = nowNs();
    t.result = semget(key, 1, flags);
    t.ns = nowNs() - begin;
    t.error = t.result < 0 ? errno : 0;
    return t;
}

// Runs the call in a child and passes the timing back through shared memory.
Timed timedSemgetInChild(key_t key, int flags, Timed* shared)
{
    pid_t pid = fork();
    if (pid < 0)
        return {-1, errno, 0};
    if (pid == 0) {
        *shared = timedSemget(key, flags);
        _exit(0);
    }
    int status = 0;
    waitpid(pid, &status, 0);
    if (!WIFEXITED(status))
        return {-1, ECHILD, 0};
    return *shared;
}

// Owns the ids created for one row; removes them whatever happens.
struct Created {
    std::vector<int> ids;
    ~Created() { clear(); }
    void clear()
    {
        for (int id : ids)
            semctl(id, 0, IPC_RMID);
        ids.clear();
    }
};

struct Row {
    int64_t keys = 0;
    uint64_t createTotalNs = 0, createMaxNs = 0;
    uint64_t lookupTotalNs = 0, lookupMaxNs = 0; // lookup total is the mean over passes
    uint64_t lookupMedianNs = 0;                 // the median pass: one preempted call moves the mean
    uint64_t lookupPasses = 0, calls = 0;
};

// One semget, in this process or in a fresh child (--process-per-call).
struct Caller {
    Timed* shared = nullptr; // the child's result, when per call

    Timed operator()(key_t key, int flags) const
    {
        return shared ? timedSemgetInChild(key, flags, shared) : timedSemget(key, flags);
    }
};

// Creates keys base .. base+n-1; "" or what failed. Stops early on a signal.
std::string createSets(const Caller& call, key_t base, int64_t n, StopControl& stop, Created& created, Row& row)
{
    for (int64_t k = 0; k < n; ++k) {
        Timed t = call(base + static_cast<key_t>(k), IPC_CREAT | IPC_EXCL | 0600);
        if (t.result < 0)
            return "semget(key " + std::to_string(base + k) + ", IPC_CREAT) failed: " + std::strerror(t.error) +
                (t.error == ENOSPC  ? " (raise SEMMNI in /proc/sys/kernel/sem)"
                 : t.error == EEXIST ? " (a set with that key exists; see ipcs -s)"
                                     : "");
        created.ids.push_back(t.result);
        row.createTotalNs += t.ns;
        row.createMaxNs = std::max(row.createMaxNs, t.ns);
        ++row.calls;
        if ((k & 255) == 255 && stop.pollSignal())
            break;
    }
    return {};
}

// Pass times for the median: all of them up to kKept, then a uniform sample of
// kKept (reservoir sampling), so a day-long --duration stays in 512 KiB.
class PassSample {
public:
    static constexpr size_t kKept = 65536;

    void add(uint64_t ns)
    {
        ++seen_;
        if (kept_.size() < kKept) {
            kept_.push_back(ns);
            return;
        }
        std::uniform_int_distribution<uint64_t> slot(0, seen_ - 1);
        if (uint64_t i = slot(random_); i < kKept)
            kept_[i] = ns;
    }
    uint64_t seen() const { return seen_; }
    // The lower median, so that it is one of the passes.
    uint64_t median()
    {
        if (kept_.empty())
            return 0;
        auto middle = kept_.begin() + static_cast<std::ptrdiff_t>((kept_.size() - 1) / 2);
        std::nth_element(kept_.begin(), middle, kept_.end());
        return *middle;
    }

private:
    std::vector<uint64_t> kept_;
    uint64_t seen_ = 0;
    std::minstd_rand random_{1};
};

// Looks every created key up again, pass after pass until the row's share of
// the time is used (at least one pass); "" or what failed.
std::string lookUpSets(const Caller& call, key_t base, const Created& created, double share, StopControl& stop,
                       Row& row)
{
    const auto rowStart = Clock::now();
    PassSample passes;
    do {
        uint64_t pass = 0;
        for (size_t k = 0; k < created.ids.size(); ++k) {
            Timed t = call(base + static_cast<key_t>(k), 0600);
            if (t.result != created.ids[k])
                return "lookup of key " + std::to_string(base + static_cast<key_t>(k)) + " returned " +
                    std::to_string(t.result) + ", expected id " + std::to_string(created.ids[k]);
            pass += t.ns;
            row.lookupMaxNs = std::max(row.lookupMaxNs, t.ns);
            ++row.calls;
        }
        row.lookupTotalNs += pass;
        passes.add(pass);
    } while (secondsSince(rowStart) < share && !stop.pollSignal());
    row.lookupPasses = passes.seen();
    row.lookupTotalNs /= row.lookupPasses;
    row.lookupMedianNs = passes.median();
    return {};
}

void printRows(const std::vector<Row>& rows, bool perCall, double elapsed, bool interrupted)
{
    auto us = [](uint64_t ns) { return static_cast<double>(ns) / 1000.0; };
    std::vector<std::vector<std::string>> table{
        {"keys", "create total us", "create max us", "lookup total us", "lookup median us", "lookup max us",
         "passes"}};
    nlohmann::json jrows = nlohmann::json::array();
    uint64_t calls = 0;
    for (const auto& r : rows) {
        calls += r.calls;
        table.push_back({std::to_string(r.keys), formatNumber(us(r.createTotalNs), 1),
                         formatNumber(us(r.createMaxNs), 1), formatNumber(us(r.lookupTotalNs), 1),
                         formatNumber(us(r.lookupMedianNs), 1), formatNumber(us(r.lookupMaxNs), 1),
                         std::to_string(r.lookupPasses)});
        jrows.push_back({{"keys", r.keys},
                         {"create_total_us", us(r.createTotalNs)},
                         {"create_max_us", us(r.createMaxNs)},
                         {"lookup_total_us", us(r.lookupTotalNs)},
                         {"lookup_median_us", us(r.lookupMedianNs)},
                         {"lookup_max_us", us(r.lookupMaxNs)},
                         {"lookup_passes", r.lookupPasses}});
    }
    printTable(table);
    printResult({{"benchmark", "semget-keys"},
                 {"ops", calls},
                 {"ops_per_sec", static_cast<double>(calls) / elapsed},
                 {"process_per_call", perCall},
                 {"rows", jrows},
                 {"duration_s", elapsed},
                 {"interrupted", interrupted}});
}

} // namespace

int main(int argc, char** argv)
{
    std::vector<int64_t> keyCounts{1, 10, 32, 100, 1000, 10000};
    double duration = 5.0;
    bool perCall = false;
    Flags flags("semget-keys",
                "Creates KEYS System V semaphore sets with semget(IPC_CREAT), then looks them up\n"
                "again (lookup only), for each KEYS value; reports total and max single-call time.");
    flags.addIntList("keys", &keyCounts, 1, 65536, "comma-separated KEYS values");
    flags.addDouble("duration", &duration, 0.01, 86400,
                    "time budget: lookup passes repeat until each row's share is used (at least one)");
    flags.addSwitch("process-per-call", &perCall, "run every semget call in a fresh child process");
    flags.parse(argc, argv);

    StopControl stop;
    Caller call;
    if (perCall) {
        void* mem = mmap(nullptr, sizeof(Timed), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
        if (mem == MAP_FAILED)
            die(flags.program(), "mmap");
        call.shared = new (mem) Timed;
    }
    // Keys from a per-process range so that parallel runs do not collide.
    const key_t base = static_cast<key_t>(0x10000000 + (getpid() % 0x1000) * 0x10000);
    const double share = duration / static_cast<double>(keyCounts.size());
    std::vector<Row> rows;
    const auto start = Clock::now();
    for (int64_t n : keyCounts) {
        if (stop.pollSignal())
            break;
        Created created;
        created.ids.reserve(static_cast<size_t>(n));
        Row row;
        row.keys = n;
        std::string failure = createSets(call, base, n, stop, created, row);
        if (failure.empty() && stop.stopping())
            break;
        if (failure.empty())
            failure = lookUpSets(call, base, created, share, stop, row);
        if (!failure.empty()) {
            std::fprintf(stderr, "%s: %s\n", flags.program().c_str(), failure.c_str());
            return kExitFailure;
        }
        rows.push_back(row);
    }
    printRows(rows, perCall, secondsSince(start), stop.signal() != 0);
    return 0;
}
