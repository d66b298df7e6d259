// SPDX-License-Identifier: GPL-2.0-or-later
// What one contended wait costs the wait programs themselves, apart from the
// workload and from other load: the real (unattached) raw_tp programs of
// wait.bpf.c run by BPF_PROG_TEST_RUN on CPU 0 over a synthetic hot spinlock
// (begin, end, begin, end, ...), with the kernel's own run-time statistics
// (BPF_ENABLE_STATS) giving ns per run of each program. The loop reaches a
// few 10^5 waits/s, above the default timing budget, so nearly all of them
// take the untimed path, as on semop-multi. Instruction cost only: the cache
// misses a real hot lock adds are not in it (overhead.sh -s has those).
//
//   bench_wait_prog_cost [--waits N] [--rounds R]
//
// Scenarios: record (the defaults: timing budget 20000/s/CPU, stack budget
// 1000/s/CPU), names, cgroup (record plus --lock-names or --per-cgroup),
// labels (record plus --lock-owner --lock-names --per-cgroup; the owner read
// is for sleeping locks only, so it costs a spinlock's wait nothing),
// every-timed (--timing-budget 0), untimed-blind (record without timing the
// long untimed waits: exact_wait_ns 0, an untimed wait reads no clock at all,
// as before they were); and floor, a raw_tp program that returns
// at once, run the same way: what the statistics themselves add to a run.
// Prints the median over rounds. Needs root.
#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <iomanip>
#include <iostream>
#include <memory>
#include <string>
#include <system_error>
#include <vector>

#include <sched.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "hook_floor.skel.h"
#include "lockscope_bpf.h"
#include "wait.skel.h"

namespace {

constexpr uint64_t kLock = 0xffff888000001000ULL;
// record's defaults per 10 ms window (Options::timing_budget 20000/s,
// stack_budget 1000/s).
constexpr uint32_t kTimedPerWindow = 200;
constexpr uint32_t kWalksPerWindow = 10;
// What record sets exact_wait_ns to on a 250 Hz kernel (probes::exactWaitNs);
// the waits here are far shorter, so only the check's cost shows.
constexpr uint64_t kExactWaitNs = 8388608;

struct Scenario {
    const char* name;
    bool names;
    bool owner;
    bool cgroup;
    bool every_timed;
    bool long_timed = true; // exact_wait_ns set, as record sets it under a budget
};

struct Destroy {
    void operator()(ls_wait* s) const { ls_wait__destroy(s); }
};
using Skel = std::unique_ptr<ls_wait, Destroy>;

Skel load(const Scenario& s)
{
    Skel skel(ls_wait__open());
    if (!skel)
        return nullptr;
    auto& p = skel->progs;
    for (bpf_program* prog : { p.wait_begin_btf, p.wait_end_btf, p.wait_begin_tp, p.wait_end_tp })
        bpf_program__set_autoload(prog, false);
    skel->rodata->time_window_events = s.every_timed ? 0 : kTimedPerWindow;
    skel->rodata->stack_window_walks = kWalksPerWindow;
    skel->rodata->lock_names = s.names;
    skel->rodata->owner_scan = s.owner;
    skel->rodata->per_cgroup = s.cgroup;
    skel->rodata->exact_wait_ns = s.long_timed && !s.every_timed ? kExactWaitNs : 0;
    if (ls_wait__load(skel.get()) != 0)
        return nullptr;
    return skel;
}

bool run(bpf_program* prog, uint64_t a0, uint64_t a1)
{
    uint64_t args[2] = { a0, a1 };
    LIBBPF_OPTS(bpf_test_run_opts, opts, .ctx_in = args, .ctx_size_in = sizeof args,
        .flags = BPF_F_TEST_RUN_ON_CPU, .cpu = 0);
    return bpf_prog_test_run_opts(bpf_program__fd(prog), &opts) == 0;
}

struct RunStats {
    uint64_t ns = 0, cnt = 0;
};

RunStats statsOf(bpf_program* prog)
{
    bpf_prog_info info {};
    uint32_t len = sizeof info;
    RunStats r;
    if (bpf_obj_get_info_by_fd(bpf_program__fd(prog), &info, &len) == 0) {
        r.ns = info.run_time_ns;
        r.cnt = info.run_cnt;
    }
    return r;
}

double nsPerRun(const RunStats& a, const RunStats& b)
{
    return b.cnt > a.cnt ? static_cast<double>(b.ns - a.ns) / static_cast<double>(b.cnt - a.cnt) : 0.0;
}

int fail(const std::string& why)
{
    std::cerr << "bench_wait_prog_cost: " << why << '\n';
    return 1;
}

std::string lastError()
{
    return std::generic_category().message(errno);
}

double median(std::vector<double> v)
{
    std::sort(v.begin(), v.end());
    return v.empty() ? 0.0 : v[v.size() / 2];
}

} // namespace

int main(int argc, char** argv)
{
    unsigned waits = 200000, rounds = 5;
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        if ((a == "--waits" || a == "--rounds") && i + 1 < argc) {
            const long v = std::strtol(argv[++i], nullptr, 10);
            if (v <= 0)
                return fail(a + " needs a positive number") + 1;
            (a == "--waits" ? waits : rounds) = static_cast<unsigned>(v);
        } else {
            std::cerr << "usage: bench_wait_prog_cost [--waits N] [--rounds R]\n";
            return 2;
        }
    }
    if (geteuid() != 0)
        return fail("needs root (BPF)");
    cpu_set_t zero;
    CPU_ZERO(&zero);
    CPU_SET(0, &zero);
    // A run on CPU 0 from another CPU executes in an IPI there.
    if (sched_setaffinity(0, sizeof zero, &zero) != 0)
        return fail("cannot pin to CPU 0: " + lastError());
    const int statsFd = bpf_enable_stats(BPF_STATS_RUN_TIME);
    if (statsFd < 0)
        return fail("BPF_ENABLE_STATS failed: " + lastError());
    std::cout << waits << " waits per round, median of " << rounds << " rounds, raw_tp programs run on CPU 0\n"
              << std::left << std::setw(12) << "scenario" << std::right << std::setw(15) << "begin ns/run"
              << std::setw(15) << "end ns/run" << std::setw(11) << "waits/s" << '\n'
              << std::fixed;
    for (const Scenario& s : { Scenario { "record", false, false, false, false },
             Scenario { "names", true, false, false, false }, Scenario { "cgroup", false, false, true, false },
             Scenario { "labels", true, true, true, false }, Scenario { "every-timed", false, false, false, true },
             Scenario { "untimed-blind", false, false, false, false, false } }) {
        Skel skel = load(s);
        if (!skel) {
            close(statsFd);
            return fail(std::string("cannot load wait.bpf.o for ") + s.name);
        }
        std::vector<double> begins, ends, rates;
        for (unsigned r = 0; r < rounds; ++r) {
            const RunStats b0 = statsOf(skel->progs.wait_begin_raw), e0 = statsOf(skel->progs.wait_end_raw);
            timespec t0 {}, t1 {};
            clock_gettime(CLOCK_MONOTONIC, &t0);
            for (unsigned i = 0; i < waits; ++i)
                if (!run(skel->progs.wait_begin_raw, kLock, LS_LCB_F_SPIN) || !run(skel->progs.wait_end_raw, kLock, 0)) {
                    const std::string why = lastError();
                    close(statsFd);
                    return fail("BPF_PROG_TEST_RUN failed: " + why);
                }
            clock_gettime(CLOCK_MONOTONIC, &t1);
            begins.push_back(nsPerRun(b0, statsOf(skel->progs.wait_begin_raw)));
            ends.push_back(nsPerRun(e0, statsOf(skel->progs.wait_end_raw)));
            const double secs = static_cast<double>(t1.tv_sec - t0.tv_sec) + static_cast<double>(t1.tv_nsec - t0.tv_nsec) / 1e9;
            rates.push_back(static_cast<double>(waits) / secs);
        }
        std::cout << std::left << std::setw(12) << s.name << std::right << std::setprecision(1) << std::setw(15)
                  << median(begins) << std::setw(15) << median(ends) << std::setprecision(0) << std::setw(11)
                  << median(rates) << '\n';
    }
    std::unique_ptr<ls_hook_floor, decltype(&ls_hook_floor__destroy)> floor(ls_hook_floor__open(), ls_hook_floor__destroy);
    if (floor) {
        for (bpf_program* prog : { floor->progs.floor_begin, floor->progs.floor_end, floor->progs.floor_sys_exit })
            bpf_program__set_autoload(prog, false);
    }
    if (!floor || ls_hook_floor__load(floor.get()) != 0) {
        close(statsFd);
        return fail("cannot load hook_floor.bpf.o");
    }
    std::vector<double> floors;
    for (unsigned r = 0; r < rounds; ++r) {
        const RunStats f0 = statsOf(floor->progs.floor_sys_enter);
        for (unsigned i = 0; i < waits; ++i)
            run(floor->progs.floor_sys_enter, kLock, 0);
        floors.push_back(nsPerRun(f0, statsOf(floor->progs.floor_sys_enter)));
    }
    std::cout << std::left << std::setw(12) << "floor" << std::right << std::setprecision(1) << std::setw(15)
              << median(floors) << '\n';
    close(statsFd);
    return 0;
}
