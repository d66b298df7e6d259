// SPDX-License-Identifier: GPL-2.0-or-later
// lockscope-lab-hold-cost: what the hold probes cost per spin-lock event,
// measured inside a stock Debian kernel under qemu (this host's kernel
// refuses fentry and has no kprobes). One boot; the same semop workload runs
// in alternating rounds: bare, recorded without hold probes, with hold probes
// at full rate (the default stack budget, and walking every hold's stack),
// and with --hold-sample N. The table gives each mode's time
// per workload syscall side by side, the ratio to the no-hold recording,
// and the extra time per recorded hold event.
//
// Under TCG every guest instruction is emulated (~10-50x slower than
// hardware) and BPF programs are JIT-compiled x86 that TCG then translates
// again, so absolute ns are not hardware figures; the ratios show the shape.
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <map>
#include <string>
#include <vector>

#include "bench_stats.h"
#include "lockscope/capture/io.h"
#include "lockscope/lab/error.h"
#include "lockscope/lab/lab.h"

namespace fs = std::filesystem;
using namespace lockscope::lab;
using bench::median;

namespace {

const std::string kWorkload = "/usr/bin/lockscope-lab-workload";

struct Mode {
    std::string name;
    std::vector<std::string> recordFlags; // "bare" runs the workload without record
};

std::vector<Mode> holdModes(unsigned sample)
{
    return { { "bare", {} }, { "no-hold", { "--no-cpu", "--no-hold" } }, { "hold", { "--no-cpu", "--hold" } },
        { "hold-all-stacks", { "--no-cpu", "--hold", "--stack-budget", "0" } },
        { "hold-sample-" + std::to_string(sample), { "--no-cpu", "--hold-sample", std::to_string(sample) } } };
}

std::string stepName(unsigned round, size_t mode)
{
    return "r" + std::to_string(round) + "_m" + std::to_string(mode);
}

// Every mode once per round, in order; each recorded mode writes its capture.
std::vector<GuestStep> guestSteps(const std::vector<Mode>& modes, unsigned rounds, unsigned ops)
{
    const std::vector<std::string> load = { kWorkload, "sem", "--threads", "2", "--ops", std::to_string(ops) };
    std::vector<GuestStep> steps;
    for (unsigned r = 0; r < rounds; ++r) {
        for (size_t m = 0; m < modes.size(); ++m) {
            std::string name = stepName(r, m);
            std::vector<std::string> cmd;
            std::vector<std::string> outputs;
            if (m != 0) {
                cmd = { "/usr/bin/lockscope", "record", "-o", "/lab/out/" + name + ".json" };
                cmd.insert(cmd.end(), modes[m].recordFlags.begin(), modes[m].recordFlags.end());
                cmd.push_back("--");
                outputs.push_back("/lab/out/" + name + ".json");
            }
            cmd.insert(cmd.end(), load.begin(), load.end());
            steps.push_back({ name, cmd, outputs });
        }
    }
    return steps;
}

// Per mode, over the rounds: ns per workload syscall, and hold events recorded.
struct Measured {
    std::map<size_t, std::vector<double>> ns;
    std::map<size_t, std::vector<double>> holds;
};

Measured readRounds(const GuestRun& run, size_t modes, unsigned rounds)
{
    Measured out;
    for (unsigned r = 0; r < rounds; ++r) {
        for (size_t m = 0; m < modes; ++m) {
            std::string name = stepName(r, m);
            auto res = bench::workloadResult(name, run.file(name + ".log"));
            out.ns[m].push_back(res.at("ns_per_syscall").get<double>());
            if (m != 0) {
                auto c = lockscope::parseCapture(run.file(name + ".json"));
                uint64_t h = 0;
                for (const auto& l : c.locks)
                    h += l.hold.count();
                out.holds[m].push_back(static_cast<double>(h));
            }
        }
    }
    return out;
}

void printTable(const std::vector<Mode>& modes, Measured& measured, double calls)
{
    const double base = median(measured.ns[1]);
    std::printf("%-16s %14s %12s %16s %20s\n", "mode", "ns/syscall", "vs no-hold", "hold events/run",
        "extra ns/hold event");
    for (size_t m = 0; m < modes.size(); ++m) {
        double v = median(measured.ns[m]);
        double h = m ? median(measured.holds[m]) : 0;
        double per_event = (m >= 2 && h > 0) ? (v - base) * calls / h : 0;
        std::printf("%-16s %14.1f %11.3fx %16.0f %20s\n", modes[m].name.c_str(), v, base > 0 ? v / base : 0, h,
            m >= 2 ? std::to_string(static_cast<long long>(per_event)).c_str() : "-");
    }
    std::printf("(hold-sample: the cost is paid on every acquisition, only 1 in N is timed, so its "
                "per-event figure divides by recorded events)\n");
}

} // namespace

int main(int argc, char** argv)
{
    std::string cache, out = "lab-hold-cost", lockscope, workload, kernel = "debian:cloud";
    unsigned rounds = 3, ops = 5000, sample = 10;
    try {
        const std::string unknown = bench::parseFlags(argc, argv,
            { { "--cache", bench::into(cache) }, { "--out", bench::into(out) },
                { "--lockscope", bench::into(lockscope) }, { "--workload", bench::into(workload) },
                { "--kernel", bench::into(kernel) }, { "--rounds", bench::countInto("--rounds", rounds) },
                { "--ops", bench::countInto("--ops", ops) },
                { "--sample", bench::countInto("--sample", sample) } });
        if (!unknown.empty()) {
            std::fprintf(stderr, "lockscope-lab-hold-cost: unknown option %s\n", unknown.c_str());
            return 2;
        }
        if (lockscope.empty() || workload.empty()) {
            std::fprintf(stderr,
                "usage: lockscope-lab-hold-cost --lockscope BIN --workload lockscope-lab-workload "
                "[--cache DIR] [--out DIR] [--kernel debian:cloud] [--rounds 3] [--ops 5000] "
                "[--sample 10]\n");
            return 2;
        }
        auto progress = [](const std::string& s) { std::cerr << "hold-cost: " << s << std::endl; };
        auto k = resolveKernel({ "bench", kernel }, cache.empty() ? defaultCacheDir() : cache, progress);
        const std::vector<Mode> modes = holdModes(sample);
        BootOptions boot;
        boot.timeout_s = 600;
        auto run = runInGuest(k, guestSteps(modes, rounds, ops),
            { { kWorkload, workload }, { "/usr/bin/lockscope", lockscope } }, boot, out, progress);
        if (!run.ok()) {
            std::cerr << "hold-cost: FAILED: " << run.failure << "\n" << run.serialTail(30) << std::endl;
            return 1;
        }
        Measured measured = readRounds(run, modes.size(), rounds);
        const double calls = 2.0 * 2.0 * ops; // threads x ops x (down, up)
        std::printf("\nhold-probe cost in the guest (%s, %s, %u rounds, %.0f semop calls per run)\n",
            k.description.c_str(), run.boot.accel.c_str(), rounds, calls);
        printTable(modes, measured, calls);
        return 0;
    } catch (const std::exception& e) {
        std::fprintf(stderr, "lockscope-lab-hold-cost: %s\n", e.what());
        return 1;
    }
}
