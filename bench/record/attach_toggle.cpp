// SPDX-License-Identifier: GPL-2.0-or-later
// Throughput cost of the probes, measured by attaching and detaching them
// under one workload that keeps running in this process (toggle_loads.h:
// semop as semop-multi --multi, timer as timer-stress, postwait as
// sem-postwait, filepos: read() of one shared fd, a hot mutex). On a shared
// 2-vCPU VM a workload's own rate moves by 30-50% between runs (the host
// decides), which swamps a few percent of probe cost when each mode is a
// separate run (overhead.sh). Here every cycle measures each mode for a
// second between two seconds alone, and the medians of the per-cycle ratios
// are printed.
//
//   bench_attach_toggle [--cycles N] [--seconds S] [--threads T] [--load semop|timer|postwait|filepos]
//                       [--modes A,B,...]
//
// Modes: alone; hook (programs that return at once: what the hooks cost
// by themselves); lockscope (the wait probe as `lockscope record` sets it up,
// stack budget 1000/s/CPU, timing budget 20000/s/CPU); every-timed
// (--timing-budget 0); every-stack (--stack-budget 0); no-stacks
// (--stack-depth 0); sc-hook (programs that return at once on
// raw_syscalls); syscalls (the syscall probe alone, budget 20000/s/CPU);
// sc-exact (budget 0); record and record-exact (every probe `record` and
// `record --exact` attach: without fentry, record's default times no syscalls);
// owner, names, cgroup (lockscope plus --lock-owner, --lock-names or
// --per-cgroup) and labels (all three); blind-tail (lockscope without timing
// the long untimed waits, Options::exact_tail off: its cost); cpu (CPU sampling alone at record's
// default frequency) and cpu-HZ (at HZ per CPU).
// Needs root.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <memory>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include <csignal>

#include <unistd.h>

#include <bpf/libbpf.h>

#include "hook_floor.skel.h"
#include "lockscope/probes/probes.h"
#include "toggle_loads.h"

namespace {

using Clock = std::chrono::steady_clock;
namespace probes = lockscope::probes;

// Ctrl-C ends the run after the current mode, so the semaphore set (which
// outlives a killed process) is removed and the cycles so far are summed up.
volatile std::sig_atomic_t g_stop = 0;

void sleepUnlessStopped(double seconds)
{
    const auto until = Clock::now() + std::chrono::duration<double>(seconds);
    while (!g_stop && Clock::now() < until)
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
}

// Whatever a mode attached; destroying it detaches. session: the wait
// probe's, to read how many waits it saw and how many went untimed.
struct Attached {
    std::shared_ptr<void> hold;
    std::shared_ptr<probes::Session> session;
};

// Programs that return at once on the contention tracepoints, or on
// raw_syscalls:sys_enter/sys_exit.
Attached attachHookFloor(bool syscalls)
{
    ls_hook_floor* skel = ls_hook_floor__open();
    if (!skel)
        throw std::runtime_error("hook_floor: open failed");
    Attached holder { std::shared_ptr<void>(
                          skel, [](void* p) { ls_hook_floor__destroy(static_cast<ls_hook_floor*>(p)); }),
        nullptr };
    for (bpf_program* p : { skel->progs.floor_begin, skel->progs.floor_end })
        bpf_program__set_autoload(p, !syscalls);
    for (bpf_program* p : { skel->progs.floor_sys_enter, skel->progs.floor_sys_exit })
        bpf_program__set_autoload(p, syscalls);
    if (ls_hook_floor__load(skel) != 0 || ls_hook_floor__attach(skel) != 0)
        throw std::runtime_error("hook_floor: load or attach failed");
    return holder;
}

// Options that attach nothing; each mode turns on what it measures.
probes::Options nothingOn()
{
    probes::Options o;
    o.wait = probes::Backend::Off;
    o.hold = probes::Backend::Off;
    o.functions = probes::Backend::Off;
    o.syscalls = false;
    o.cpu_frequency_hz = 0;
    o.follow_forks = false;
    return o;
}

// A session of o, or an error if the probe the mode measures did not attach.
Attached openAttached(const probes::Options& o, const std::string& probe)
{
    std::shared_ptr<probes::Session> s = probes::Session::open(o);
    for (const auto& st : s->status())
        if (st.name == probe && !st.attached)
            throw std::runtime_error(probe + ": " + st.reason);
    return { nullptr, s };
}

// The syscall probe alone, on this process, as record sets it up (timing
// budget in calls per second per CPU; 0: every call timed).
Attached attachSyscalls(uint32_t budget)
{
    probes::Options o = nothingOn();
    o.syscalls = true;
    o.syscall_budget = budget;
    o.tgids = { static_cast<uint32_t>(getpid()) };
    return openAttached(o, "syscall:semop");
}

// CPU sampling alone, as record sets it up, at hz per CPU.
Attached attachCpu(uint32_t hz)
{
    probes::Options o = nothingOn();
    o.cpu_frequency_hz = hz;
    return openAttached(o, "cpu_sampling");
}

// Every probe `lockscope record` attaches by default, with its budgets.
Attached attachRecordDefault(bool exact)
{
    probes::Options o;
    o.stack_budget = 1000;
    o.timing_budget = exact ? 0 : 20000;
    o.syscall_budget = exact ? 0 : 20000;
    o.syscalls = exact; // off unless asked for; --exact times every call
    o.tgids = { static_cast<uint32_t>(getpid()) };
    return { nullptr, probes::Session::open(o) };
}

// extra: what a mode adds to record's wait probe (--lock-owner, --lock-names, --per-cgroup).
Attached attachWait(uint32_t stack_budget, unsigned stack_depth, uint32_t timing_budget,
    const std::function<void(probes::Options&)>& extra = {})
{
    probes::Options o = nothingOn();
    o.wait = probes::Options {}.wait;
    o.stack_budget = stack_budget;
    o.timing_budget = timing_budget;
    o.stack_depth = stack_depth;
    if (extra)
        extra(o);
    return openAttached(o, "lock_contention");
}

struct Mode {
    std::string name;
    std::function<Attached()> attach;
};

// The frequencies of the cpu-HZ modes in a ",a,b,c," mode list.
std::vector<uint32_t> cpuFrequencies(const std::string& list)
{
    std::vector<uint32_t> out;
    for (size_t at = list.find(",cpu-"); at != std::string::npos; at = list.find(",cpu-", at + 1)) {
        const unsigned long hz = std::strtoul(list.c_str() + at + 5, nullptr, 10);
        if (hz > 0 && hz <= 100000)
            out.push_back(static_cast<uint32_t>(hz));
    }
    return out;
}

double median(std::vector<double> v)
{
    std::sort(v.begin(), v.end());
    const size_t n = v.size();
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

// The positive number after argv[i] (advancing i), or 0 after printing why not.
double argValue(int argc, char** argv, int& i)
{
    if (i + 1 >= argc) {
        std::fprintf(stderr, "bench_attach_toggle: %s needs a value\n", argv[i]);
        return 0;
    }
    char* end = nullptr;
    const double v = std::strtod(argv[++i], &end);
    if (end == argv[i] || *end || !(v > 0)) {
        std::fprintf(
            stderr, "bench_attach_toggle: %s needs a positive number, got '%s'\n", argv[i - 1], argv[i]);
        return 0;
    }
    return v;
}

} // namespace

int main(int argc, char** argv)
{
    int cycles = 15;
    double seconds = 1;
    unsigned threads = 8;
    std::string only; // --modes a,b,c: these after alone; empty = all
    std::string loadName = "semop";
    const char* usage = "usage: bench_attach_toggle [--cycles N] [--seconds S] [--threads T] [--load "
                        "semop|timer|postwait|filepos]"
                        " [--modes A,B,...]\n";
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        if (a == "--modes" && i + 1 < argc) {
            only = "," + std::string(argv[++i]) + ",";
            continue;
        }
        if (a == "--load" && i + 1 < argc) {
            loadName = argv[++i];
            continue;
        }
        if (a != "--cycles" && a != "--seconds" && a != "--threads") {
            std::fprintf(stderr, "%s", usage);
            return 2;
        }
        const double v = argValue(argc, argv, i);
        if (v <= 0)
            return 2;
        if (a == "--cycles")
            cycles = std::max(1, static_cast<int>(v));
        else if (a == "--seconds")
            seconds = v;
        else
            threads = std::max(1U, static_cast<unsigned>(v));
    }
    libbpf_set_print([](libbpf_print_level, const char*, va_list) { return 0; });
    struct sigaction sa { };
    sa.sa_handler = [](int) { g_stop = 1; };
    sigaction(SIGINT, &sa, nullptr);
    sigaction(SIGTERM, &sa, nullptr);

    const std::vector<Mode> all = {
        { "alone", [] { return Attached {}; } },
        { "hook", [] { return attachHookFloor(false); } },
        { "lockscope", [] { return attachWait(1000, 16, 20000); } },
        { "every-timed", [] { return attachWait(1000, 16, 0); } },
        { "blind-tail",
            [] { return attachWait(1000, 16, 20000, [](probes::Options& o) { o.exact_tail = false; }); } },
        { "every-stack", [] { return attachWait(0, 16, 20000); } },
        { "no-stacks", [] { return attachWait(1000, 0, 20000); } },
        { "owner",
            [] { return attachWait(1000, 16, 20000, [](probes::Options& o) { o.lock_owner = true; }); } },
        { "names",
            [] { return attachWait(1000, 16, 20000, [](probes::Options& o) { o.lock_names = true; }); } },
        { "cgroup",
            [] { return attachWait(1000, 16, 20000, [](probes::Options& o) { o.per_cgroup = true; }); } },
        { "labels",
            [] {
                return attachWait(1000, 16, 20000,
                    [](probes::Options& o) { o.lock_owner = o.lock_names = o.per_cgroup = true; });
            } },
        { "sc-hook", [] { return attachHookFloor(true); } },
        { "syscalls", [] { return attachSyscalls(20000); } },
        { "sc-exact", [] { return attachSyscalls(0); } },
        { "record", [] { return attachRecordDefault(false); } },
        { "record-exact", [] { return attachRecordDefault(true); } },
        { "cpu", [] { return attachCpu(probes::Options {}.cpu_frequency_hz); } },
    };
    std::vector<Mode> modes;
    for (const Mode& m : all)
        if (modes.empty() || only.empty() || only.find("," + m.name + ",") != std::string::npos)
            modes.push_back(m);
    for (uint32_t hz : cpuFrequencies(only))
        modes.push_back({ "cpu-" + std::to_string(hz), [hz] { return attachCpu(hz); } });
    if (modes.size() < 2) {
        std::fprintf(stderr,
            "bench_attach_toggle: --modes names none of hook, lockscope, every-timed, every-stack, "
            "no-stacks, owner, names, cgroup, labels, blind-tail, sc-hook, syscalls, sc-exact, record, "
            "record-exact, cpu, cpu-HZ\n");
        return 2;
    }
    try {
        const std::unique_ptr<lockscope::bench::Load> load = lockscope::bench::makeLoad(loadName, threads);
        if (!load) {
            std::fprintf(stderr,
                "bench_attach_toggle: --load is semop, timer, postwait or filepos, got '%s'\n",
                loadName.c_str());
            return 2;
        }
        std::vector<std::vector<double>> ratio(modes.size());
        std::vector<double> alone;
        std::printf("%s, %d cycles of %.1f s per mode\n", load->describe().c_str(), cycles, seconds);
        // Each mode runs between two seconds alone and is compared with
        // their mean, so a drift of the workload's rate within a cycle
        // cancels; the modes' order rotates from cycle to cycle.
        // Per mode with a wait probe: waits a second and the share untimed.
        std::vector<std::vector<double>> waitRate(modes.size()), untimed(modes.size());
        std::vector<std::vector<double>> callRate(modes.size()), callsUntimed(modes.size());
        auto measure = [&](size_t m) {
            const auto attached = Clock::now();
            Attached a = modes[m].attach();
            sleepUnlessStopped(0.1); // past attach
            const uint64_t before = load->ops();
            const auto t0 = Clock::now();
            sleepUnlessStopped(seconds);
            const uint64_t after = load->ops();
            const double rate = static_cast<double>(after - before)
                / std::chrono::duration<double>(Clock::now() - t0).count();
            if (a.session) {
                const probes::Snapshot snap = a.session->snapshot();
                const double since = std::chrono::duration<double>(Clock::now() - attached).count();
                uint64_t waits = 0, calls = 0;
                for (const auto& r : snap.waits)
                    waits += r.hist.count();
                for (const auto& r : snap.latencies)
                    calls += r.hist.count();
                if (waits) {
                    waitRate[m].push_back(static_cast<double>(waits) / since);
                    untimed[m].push_back(
                        static_cast<double>(snap.stats.waits_untimed) / static_cast<double>(waits));
                }
                if (calls) {
                    callRate[m].push_back(static_cast<double>(calls) / since);
                    callsUntimed[m].push_back(
                        static_cast<double>(snap.stats.syscalls_untimed) / static_cast<double>(calls));
                }
            }
            a = {};
            if (load->failed())
                throw std::runtime_error("a call failed in the workload");
            return rate;
        };
        int done = 0;
        for (int c = 0; c < cycles && !g_stop; ++c) {
            std::vector<double> change(modes.size());
            double prev = measure(0), first = prev;
            for (size_t k = 0; k + 1 < modes.size() && !g_stop; ++k) {
                const size_t m = 1 + (k + static_cast<size_t>(c)) % (modes.size() - 1);
                const double rate = measure(m);
                const double next = measure(0);
                change[m] = rate / ((prev + next) / 2);
                prev = next;
            }
            if (g_stop)
                break; // this cycle's modes did not all run their time
            ++done;
            alone.push_back(first);
            std::printf("cycle %2d  alone %9.0f ops/s", c + 1, first);
            for (size_t m = 1; m < modes.size(); ++m) {
                ratio[m].push_back(change[m]);
                std::printf("  %s %+6.1f%%", modes[m].name.c_str(), (change[m] - 1) * 100);
            }
            std::printf("\n");
            std::fflush(stdout);
        }
        if (done == 0) {
            std::fprintf(stderr, "bench_attach_toggle: stopped before the first cycle ended\n");
            return 1;
        }
        std::printf("\nmedian over %d cycles (alone %.0f ops/s):\n", done, median(alone));
        for (size_t m = 1; m < modes.size(); ++m) {
            const auto [lo, hi] = std::minmax_element(ratio[m].begin(), ratio[m].end());
            std::printf("  %-12s %+6.1f%%   (cycles from %+.1f%% to %+.1f%%)", modes[m].name.c_str(),
                (median(ratio[m]) - 1) * 100, (*lo - 1) * 100, (*hi - 1) * 100);
            if (!waitRate[m].empty())
                std::printf("  %.0f waits/s, %.0f%% untimed", median(waitRate[m]), median(untimed[m]) * 100);
            if (!callRate[m].empty())
                std::printf(
                    "  %.0f syscalls/s, %.0f%% untimed", median(callRate[m]), median(callsUntimed[m]) * 100);
            std::printf("\n");
        }
    } catch (const std::exception& e) {
        std::fprintf(stderr, "bench_attach_toggle: %s\n", e.what());
        return 1;
    }
    return 0;
}
