// SPDX-License-Identifier: GPL-2.0-or-later
// lockscope-lab-record-cost: what recording costs a workload's throughput on
// a stock distro kernel, where the hold and syscall probes attach through
// fentry and spinning waits are reported (this host's kernel has neither).
// One boot of a Debian kernel under qemu; each sample workload runs alone,
// under `lockscope record` as typed, under contention capture only, and
// under `perf lock record`, the modes' order rotating every round. Prints
// per workload and mode the median ops/s, the median of each round's cost
// against that round's alone run, and perf's cost over lockscope's.
//
// TCG emulates every guest instruction (BPF JIT output and trampolines
// included), so ops/s are not hardware figures; costs are ratios measured
// side by side, which is what the table is for.
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "bench_stats.h"
#include "lockscope/lab/error.h"
#include "lockscope/lab/lab.h"

using namespace lockscope::lab;
using bench::median;

namespace {

struct Mode {
    std::string name;
    std::vector<std::string> prefix; // argv before the workload's; empty = alone
};

// alone, record, contention only, perf, then one `record` per ';'-separated
// set of flags in extra.
std::vector<Mode> modes(const std::string& extra)
{
    const std::string ls = "/usr/bin/lockscope";
    std::vector<Mode> m = {
        { "alone", {} },
        { "record", { ls, "record", "-o", "/tmp/a.json", "--" } },
        { "record-wait",
            { ls, "record", "--no-cpu", "--no-hold", "--no-syscalls", "-o", "/tmp/b.json", "--" } },
        { "perf-lock", { "/usr/bin/perf", "lock", "record", "-q", "-o", "/tmp/perf.data", "--" } },
    };
    std::istringstream sets(extra);
    for (std::string flags; std::getline(sets, flags, ';');) {
        Mode x { "record " + flags, { ls, "record" } };
        std::istringstream words(flags);
        for (std::string w; words >> w;)
            x.prefix.push_back(w);
        x.prefix.insert(x.prefix.end(), { "-o", "/tmp/c.json", "--" });
        m.push_back(x);
    }
    return m;
}

std::vector<std::string> workloadArgv(const std::string& w, const std::string& seconds)
{
    if (w == "semop-multi")
        return { "/usr/bin/semop-multi", "--multi", "--threads", "8", "--duration", seconds };
    if (w == "timer-stress")
        return { "/usr/bin/timer-stress", "--duration", seconds };
    if (w == "sem-postwait")
        return { "/usr/bin/sem-postwait", "--pairs", "4", "--duration", seconds };
    throw LabError("unknown workload '" + w + "' (semop-multi, timer-stress, sem-postwait)");
}

std::vector<std::string> splitCommas(const std::string& s)
{
    std::vector<std::string> out;
    std::istringstream in(s);
    for (std::string part; std::getline(in, part, ',');)
        out.push_back(part);
    return out;
}

std::string stepName(unsigned round, size_t w, size_t m)
{
    return "r" + std::to_string(round) + "_w" + std::to_string(w) + "_m" + std::to_string(m);
}

void printTable(const std::vector<std::string>& workloads, const std::vector<Mode>& ms,
    const std::map<std::pair<size_t, size_t>, std::vector<double>>& ops)
{
    std::printf("%-13s %-40s %12s %10s %16s %8s\n", "workload", "mode", "median ops/s", "paired cost",
        "min..max", "spread");
    for (size_t w = 0; w < workloads.size(); ++w) {
        const auto& alone = ops.at({ w, 0 });
        std::vector<double> cost(ms.size());
        for (size_t m = 0; m < ms.size(); ++m) {
            const auto& v = ops.at({ w, m });
            std::vector<double> paired;
            for (size_t r = 0; r < v.size(); ++r)
                paired.push_back(1 - v[r] / alone[r]);
            cost[m] = median(paired);
            double med = median(v);
            auto [lo, hi] = std::minmax_element(v.begin(), v.end());
            auto [plo, phi] = std::minmax_element(paired.begin(), paired.end());
            if (m == 0)
                std::printf("%-13s %-40s %12.0f %10s %16s %7.0f%%\n", workloads[w].c_str(),
                    ms[m].name.c_str(), med, "", "", 100 * (*hi - *lo) / med);
            else
                std::printf("%-13s %-40s %12.0f %9.1f%% %+7.1f..%+6.1f%% %7.0f%%\n", workloads[w].c_str(),
                    ms[m].name.c_str(), med, 100 * cost[m], 100 * *plo, 100 * *phi, 100 * (*hi - *lo) / med);
        }
        const double perf = cost[3];
        for (size_t m = 1; m < ms.size(); ++m) {
            if (m == 3)
                continue;
            if (cost[m] <= 0 || perf <= 0)
                std::printf("%s: %s %+.1f%%, perf lock record %+.1f%%: no ratio\n", workloads[w].c_str(),
                    ms[m].name.c_str(), 100 * cost[m], 100 * perf);
            else
                std::printf("%s: perf lock record costs %.1fx what %s does\n", workloads[w].c_str(),
                    perf / cost[m], ms[m].name.c_str());
        }
    }
}

// Every workload under every mode, each round, the modes' order rotating
// from round to round.
std::vector<GuestStep> guestSteps(const std::vector<std::string>& workloads, const std::vector<Mode>& ms,
    unsigned rounds, const std::string& seconds)
{
    std::vector<GuestStep> steps;
    for (unsigned r = 0; r < rounds; ++r)
        for (size_t w = 0; w < workloads.size(); ++w)
            for (size_t i = 0; i < ms.size(); ++i) {
                size_t m = (i + r) % ms.size();
                auto cmd = ms[m].prefix;
                auto load = workloadArgv(workloads[w], seconds);
                cmd.insert(cmd.end(), load.begin(), load.end());
                steps.push_back({ stepName(r, w, m), cmd, {} });
            }
    return steps;
}

// ops/s per (workload, mode), one value a round.
std::map<std::pair<size_t, size_t>, std::vector<double>> readOps(
    const GuestRun& run, size_t workloads, size_t modes, unsigned rounds)
{
    std::map<std::pair<size_t, size_t>, std::vector<double>> ops;
    for (unsigned r = 0; r < rounds; ++r)
        for (size_t w = 0; w < workloads; ++w)
            for (size_t m = 0; m < modes; ++m) {
                auto name = stepName(r, w, m);
                ops[{ w, m }].push_back(bench::workloadResult(name, run.file(name + ".log")).at("ops_per_sec"));
            }
    return ops;
}

// The probe status lines of the first round's `record`: what attached in this kernel.
void printAttached(const GuestRun& run, const std::string& workload)
{
    std::printf("\nwhat `record` attached (round 1, %s):\n", workload.c_str());
    std::istringstream log(run.file(stepName(0, 0, 1) + ".log"));
    for (std::string line; std::getline(log, line);)
        if (line.find(": attached via ") != std::string::npos || line.find(": skipped: ") != std::string::npos
            || line.find(": off") != std::string::npos)
            std::printf("  %s\n", line.c_str());
}

} // namespace

int main(int argc, char** argv)
{
    std::string cache, out = "lab-record-cost", lockscope, samples, perf = "/usr/bin/perf",
                       kernel = "debian:cloud";
    std::string accel = "tcg-multi", seconds = "2", workload_list = "semop-multi,timer-stress,sem-postwait",
                extra;
    unsigned rounds = 5, cpus = BootOptions {}.cpus;
    try {
        const std::string unknown = bench::parseFlags(argc, argv,
            { { "--cache", bench::into(cache) }, { "--out", bench::into(out) },
                { "--lockscope", bench::into(lockscope) }, { "--samples", bench::into(samples) },
                { "--perf", bench::into(perf) }, { "--kernel", bench::into(kernel) },
                { "--accel", bench::into(accel) }, { "--duration", bench::into(seconds) },
                { "--workloads", bench::into(workload_list) }, { "--also", bench::into(extra) },
                { "--rounds", bench::countInto("--rounds", rounds) },
                { "--cpus", bench::countInto("--cpus", cpus) } });
        if (!unknown.empty()) {
            std::fprintf(stderr, "lockscope-lab-record-cost: unknown option %s\n", unknown.c_str());
            return 2;
        }
        if (lockscope.empty() || samples.empty() || rounds == 0) {
            std::fprintf(stderr,
                "usage: lockscope-lab-record-cost --lockscope BIN --samples DIR (samples/bin) "
                "[--perf /usr/bin/perf] [--cache DIR] [--out DIR] [--kernel debian:cloud] "
                "[--accel tcg-multi] [--cpus 2] [--rounds 5] [--duration 2] "
                "[--workloads semop-multi,timer-stress,sem-postwait] [--also 'RECORD FLAGS;RECORD "
                "FLAGS;...']\n");
            return 2;
        }
        auto progress = [](const std::string& s) { std::cerr << "record-cost: " << s << std::endl; };
        auto k = resolveKernel({ "bench", kernel }, cache.empty() ? defaultCacheDir() : cache, progress);
        const auto workloads = splitCommas(workload_list);
        const auto ms = modes(extra);
        std::vector<GuestBinary> binaries
            = { { "/usr/bin/lockscope", lockscope }, { "/usr/bin/perf", perf } };
        for (const auto& w : workloads)
            binaries.push_back(
                { workloadArgv(w, seconds)[0], (std::filesystem::path(samples) / w).string() });
        BootOptions boot;
        boot.accel = parseAccel(accel);
        boot.memory_mb = 2048;
        boot.cpus = cpus;
        boot.timeout_s = 3600;
        auto run = runInGuest(k, guestSteps(workloads, ms, rounds, seconds), binaries, boot, out, progress);
        if (!run.ok()) {
            std::cerr << "record-cost: FAILED: " << run.failure << "\n" << run.serialTail(30) << std::endl;
            return 1;
        }
        const auto ops = readOps(run, workloads.size(), ms.size(), rounds);
        std::printf("\nrecording cost in the guest (%s, %s, %u vCPUs, %u rounds of %s s, modes rotating)\n",
            k.description.c_str(), run.boot.accel.c_str(), cpus, rounds, seconds.c_str());
        printTable(workloads, ms, ops);
        printAttached(run, workloads[0]);
        return 0;
    } catch (const std::exception& e) {
        std::fprintf(stderr, "lockscope-lab-record-cost: %s\n", e.what());
        return 1;
    }
}
