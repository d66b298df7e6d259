// SPDX-License-Identifier: GPL-2.0-or-later
// Compare two synthetic captures of 100k stacks / 10k locks (the issue's
// target: < 1 s and < 10x the files' size in memory). Reported side by side
// with the cost of parsing the same files, so the ratio compare/parse is
// machine independent.
#include <benchmark/benchmark.h>

#include <fstream>
#include <sstream>
#include <string>

#include "lockscope/capture/io.h"
#include "lockscope/reports/compare.h"
#include "lockscope/reports/render.h"
#include "sample_capture.h"

using namespace lockscope;

namespace {
struct Inputs {
    std::string beforeText, afterText;
    Capture before, after;
};

const Inputs& inputs()
{
    static const Inputs in = [] {
        Inputs i;
        i.beforeText = toJson(testing::makeSyntheticCapture(100000, 10000, 1)).dump();
        i.afterText = toJson(testing::makeSyntheticCapture(100000, 10000, 2)).dump();
        i.before = parseCapture(i.beforeText);
        i.after = parseCapture(i.afterText);
        return i;
    }();
    return in;
}

long statusKb(const char* field)
{
    std::ifstream in("/proc/self/status");
    for (std::string line; std::getline(in, line);)
        if (line.rfind(field, 0) == 0)
            return std::stol(line.substr(std::string(field).size()));
    return -1;
}

// Resets VmHWM to the current RSS (Linux >= 4.0), so the peak of one step can be read.
bool resetPeak()
{
    std::ofstream f("/proc/self/clear_refs");
    f << "5";
    return bool(f);
}

double fileMb() { return double(inputs().beforeText.size() + inputs().afterText.size()) / 1e6; }
} // namespace

static void BM_ParseBothCaptures(benchmark::State& state)
{
    const Inputs& in = inputs();
    for (auto _ : state) {
        Capture b = parseCapture(in.beforeText);
        Capture a = parseCapture(in.afterText);
        benchmark::DoNotOptimize(b.locks.data());
        benchmark::DoNotOptimize(a.locks.data());
    }
    state.counters["files_MB"] = fileMb();
}

static void BM_Compare(benchmark::State& state)
{
    const Inputs& in = inputs();
    double peakMb = 0;
    size_t locks = 0;
    for (auto _ : state) {
        state.PauseTiming();
        const bool peakOk = resetPeak();
        const long rss0 = statusKb("VmRSS:");
        state.ResumeTiming();
        reports::Comparison c = reports::compare(in.before, in.after);
        state.PauseTiming();
        if (peakOk)
            peakMb = std::max(peakMb, double(statusKb("VmHWM:") - rss0) / 1024.0 * 1.048576);
        locks = c.locks.size();
        benchmark::DoNotOptimize(c.locks.data());
        state.ResumeTiming();
    }
    state.counters["files_MB"] = fileMb();
    state.counters["compare_peak_MB"] = peakMb;
    state.counters["mem_per_file_byte"] = peakMb / fileMb();
    state.counters["locks"] = double(locks);
    state.counters["stacks_per_side"] = double(in.before.stacks.size());
}

static void BM_CompareAndRenderJson(benchmark::State& state)
{
    const Inputs& in = inputs();
    for (auto _ : state) {
        const std::string out = reports::render(reports::compare(in.before, in.after), reports::Format::Json);
        benchmark::DoNotOptimize(out.data());
    }
}

BENCHMARK(BM_ParseBothCaptures)->Unit(benchmark::kMillisecond)->Iterations(3);
BENCHMARK(BM_Compare)->Unit(benchmark::kMillisecond)->Iterations(3);
BENCHMARK(BM_CompareAndRenderJson)->Unit(benchmark::kMillisecond)->Iterations(2);
BENCHMARK_MAIN();
