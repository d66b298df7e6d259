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
// default frequency) and cpu-HZ (at HZ per CPU); sampled (lockscope as the
// agent opens it, attached part of each 2-s period above its --wait-rate-cap:
// give it --seconds 6 or more, it is measured from 2.5 s after attach; its
// waits/s count from attach).
// Needs root.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <memory>
#include <optional>
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
    double settle_s = 0.1; // measured from this long after attach
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

struct Args {
    int cycles = 15;
    double seconds = 1;
    unsigned threads = 8;
    std::string only; // --modes a,b,c as ",a,b,c,": these after alone; empty = all
    std::string load = "semop";
};

// The command line, or nullopt after printing why not (exit status 2).
std::optional<Args> parseArgs(int argc, char** argv)
{
    Args args;
    const char* usage = "usage: bench_attach_toggle [--cycles N] [--seconds S] [--threads T] [--load "
                        "semop|timer|postwait|filepos]"
                        " [--modes A,B,...]\n";
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        if (a == "--modes" && i + 1 < argc) {
            args.only = "," + std::string(argv[++i]) + ",";
            continue;
        }
        if (a == "--load" && i + 1 < argc) {
            args.load = argv[++i];
            continue;
        }
        if (a != "--cycles" && a != "--seconds" && a != "--threads") {
            std::fprintf(stderr, "%s", usage);
            return std::nullopt;
        }
        const double v = argValue(argc, argv, i);
        if (v <= 0)
            return std::nullopt;
        if (a == "--cycles")
            args.cycles = std::max(1, static_cast<int>(v));
        else if (a == "--seconds")
            args.seconds = v;
        else
            args.threads = std::max(1U, static_cast<unsigned>(v));
    }
    return args;
}

// Every mode this bench knows but the cpu-HZ ones; "alone" first.
std::vector<Mode> allModes()
{
    return {
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
        // As the agent opens it: above 15000 waits/s per CPU attached part of
        // each 2-s period, decided after a first period attached (wait_duty.h).
        { "sampled",
            [] {
                return attachWait(1000, 16, 20000, [](probes::Options& o) {
                    o.drain = true;
                    o.wait_rate_cap = 15000;
                });
            },
            2.5 },
    };
}

// "alone", then the modes in only (every mode when only is empty).
std::vector<Mode> selectModes(const std::string& only)
{
    std::vector<Mode> modes;
    for (const Mode& m : allModes())
        if (modes.empty() || only.empty() || only.find("," + m.name + ",") != std::string::npos)
            modes.push_back(m);
    for (uint32_t hz : cpuFrequencies(only))
        modes.push_back({ "cpu-" + std::to_string(hz), [hz] { return attachCpu(hz); } });
    return modes;
}

// What the cycles measured for one mode: its change against alone, and for
// a mode with a wait or syscall probe the events a second and the share
// left untimed.
struct Series {
    std::vector<double> ratio, waitRate, untimed, callRate, callsUntimed;
};

// Each mode runs between two seconds alone and is compared with their mean,
// so a drift of the workload's rate within a cycle cancels; the modes' order
// rotates from cycle to cycle.
class Toggler {
public:
    Toggler(const std::vector<Mode>& modes, lockscope::bench::Load& load, double seconds)
        : modes_(modes)
        , load_(load)
        , seconds_(seconds)
        , series_(modes.size())
    {
    }

    // One cycle, printed as a line; false when stopped before its modes all ran.
    bool cycle(int c)
    {
        std::vector<double> change(modes_.size());
        double prev = measure(0), first = prev;
        for (size_t k = 0; k + 1 < modes_.size() && !g_stop; ++k) {
            const size_t m = 1 + (k + static_cast<size_t>(c)) % (modes_.size() - 1);
            const double rate = measure(m);
            const double next = measure(0);
            change[m] = rate / ((prev + next) / 2);
            prev = next;
        }
        if (g_stop)
            return false; // this cycle's modes did not all run their time
        alone_.push_back(first);
        std::printf("cycle %2d  alone %9.0f ops/s", c + 1, first);
        for (size_t m = 1; m < modes_.size(); ++m) {
            series_[m].ratio.push_back(change[m]);
            std::printf("  %s %+6.1f%%", modes_[m].name.c_str(), (change[m] - 1) * 100);
        }
        std::printf("\n");
        std::fflush(stdout);
        return true;
    }

    int cyclesDone() const { return static_cast<int>(alone_.size()); }

    void printSummary() const
    {
        std::printf("\nmedian over %d cycles (alone %.0f ops/s):\n", cyclesDone(), median(alone_));
        for (size_t m = 1; m < modes_.size(); ++m) {
            const Series& s = series_[m];
            const auto [lo, hi] = std::minmax_element(s.ratio.begin(), s.ratio.end());
            std::printf("  %-12s %+6.1f%%   (cycles from %+.1f%% to %+.1f%%)", modes_[m].name.c_str(),
                (median(s.ratio) - 1) * 100, (*lo - 1) * 100, (*hi - 1) * 100);
            if (!s.waitRate.empty())
                std::printf("  %.0f waits/s, %.0f%% untimed", median(s.waitRate), median(s.untimed) * 100);
            if (!s.callRate.empty())
                std::printf("  %.0f syscalls/s, %.0f%% untimed", median(s.callRate), median(s.callsUntimed) * 100);
            std::printf("\n");
        }
    }

private:
    // The load's ops a second with mode m attached (after 100 ms to settle).
    double measure(size_t m)
    {
        const auto attached = Clock::now();
        Attached a = modes_[m].attach();
        sleepUnlessStopped(modes_[m].settle_s); // past attach
        const uint64_t before = load_.ops();
        const auto t0 = Clock::now();
        sleepUnlessStopped(seconds_);
        const uint64_t after = load_.ops();
        const double rate = static_cast<double>(after - before)
            / std::chrono::duration<double>(Clock::now() - t0).count();
        if (a.session)
            countEvents(series_[m], *a.session, std::chrono::duration<double>(Clock::now() - attached).count());
        a = {};
        if (load_.failed())
            throw std::runtime_error("a call failed in the workload");
        return rate;
    }

    // What the mode's probes saw over `since` seconds: waits and syscalls a
    // second, and the share of them the budgets left untimed.
    static void countEvents(Series& s, probes::Session& session, double since)
    {
        const probes::Snapshot snap = session.snapshot();
        uint64_t waits = 0, calls = 0;
        for (const auto& r : snap.waits)
            waits += r.hist.count();
        for (const auto& r : snap.latencies)
            calls += r.hist.count();
        if (waits) {
            s.waitRate.push_back(static_cast<double>(waits) / since);
            s.untimed.push_back(static_cast<double>(snap.stats.waits_untimed) / static_cast<double>(waits));
        }
        if (calls) {
            s.callRate.push_back(static_cast<double>(calls) / since);
            s.callsUntimed.push_back(
                static_cast<double>(snap.stats.syscalls_untimed) / static_cast<double>(calls));
        }
    }

    const std::vector<Mode>& modes_;
    lockscope::bench::Load& load_;
    const double seconds_;
    std::vector<Series> series_;
    std::vector<double> alone_;
};

void stopOnSignals()
{
    struct sigaction sa { };
    sa.sa_handler = [](int) { g_stop = 1; };
    sigaction(SIGINT, &sa, nullptr);
    sigaction(SIGTERM, &sa, nullptr);
}

} // namespace

int main(int argc, char** argv)
{
    const std::optional<Args> args = parseArgs(argc, argv);
    if (!args)
        return 2;
    libbpf_set_print([](libbpf_print_level, const char*, va_list) { return 0; });
    stopOnSignals();
    const std::vector<Mode> modes = selectModes(args->only);
    if (modes.size() < 2) {
        std::fprintf(stderr,
            "bench_attach_toggle: --modes names none of hook, lockscope, every-timed, every-stack, "
            "no-stacks, owner, names, cgroup, labels, blind-tail, sc-hook, syscalls, sc-exact, record, "
            "record-exact, cpu, cpu-HZ\n");
        return 2;
    }
    try {
        const std::unique_ptr<lockscope::bench::Load> load = lockscope::bench::makeLoad(args->load, args->threads);
        if (!load) {
            std::fprintf(stderr,
                "bench_attach_toggle: --load is semop, timer, postwait or filepos, got '%s'\n",
                args->load.c_str());
            return 2;
        }
        std::printf("%s, %d cycles of %.1f s per mode\n", load->describe().c_str(), args->cycles, args->seconds);
        Toggler toggler(modes, *load, args->seconds);
        for (int c = 0; c < args->cycles && !g_stop; ++c)
            if (!toggler.cycle(c))
                break;
        if (toggler.cyclesDone() == 0) {
            std::fprintf(stderr, "bench_attach_toggle: stopped before the first cycle ended\n");
            return 1;
        }
        toggler.printSummary();
    } catch (const std::exception& e) {
        std::fprintf(stderr, "bench_attach_toggle: %s\n", e.what());
        return 1;
    }
    return 0;
}
