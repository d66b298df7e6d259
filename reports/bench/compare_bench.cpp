// SPDX-License-Identifier: GPL-2.0-or-later
// Compare two synthetic captures of 100k stacks / 10k locks (the issue's
// target: < 1 s and < 10x the files' size in memory). Reported side by side
// with the cost of parsing the same files, so the ratio compare/parse is
// machine independent.
#include <benchmark/benchmark.h>

#include <cstdlib>
#include <filesystem>
#include <malloc.h>
#include <unistd.h>
#include <string>
#include <vector>

#include "lockscope/capture/io.h"
#include "lockscope/reports/compare.h"
#include "lockscope/reports/input.h"
#include "lockscope/reports/render.h"
#include "sample_capture.h"

using namespace lockscope;

namespace {
struct Inputs {
    std::string beforeText, afterText;
    Capture before, after;
    double modelsMb = 0; // the two captures' models: heap and mmapped blocks in use
};

double mallocInUseMb()
{
    const struct mallinfo2 m = mallinfo2();
    return double(m.uordblks + m.hblkhd) / 1e6;
}

const Inputs& inputs()
{
    static const Inputs in = [] {
        Inputs i;
        i.beforeText = toJson(testing::makeSyntheticCapture(100000, 10000, 1)).dump();
        i.afterText = toJson(testing::makeSyntheticCapture(100000, 10000, 2)).dump();
        const double heap0 = mallocInUseMb();
        i.before = parseCapture(i.beforeText);
        i.after = parseCapture(i.afterText);
        i.modelsMb = mallocInUseMb() - heap0;
        return i;
    }();
    return in;
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

// What the comparison holds, by malloc's count of bytes in use (heap and
// mmapped blocks): RSS cannot tell it here, where the inputs' making left
// freed heap for the comparison to reuse. The commands' peak RSS is in
// core/capture/bench/README.md.
static void BM_Compare(benchmark::State& state)
{
    const Inputs& in = inputs();
    double comparisonMb = 0;
    size_t locks = 0;
    for (auto _ : state) {
        state.PauseTiming();
        const double heap0 = mallocInUseMb();
        state.ResumeTiming();
        reports::Comparison c = reports::compare(in.before, in.after);
        state.PauseTiming();
        comparisonMb = mallocInUseMb() - heap0;
        locks = c.locks.size();
        benchmark::DoNotOptimize(c.locks.data());
        state.ResumeTiming();
    }
    state.counters["files_MB"] = fileMb();
    state.counters["models_MB"] = in.modelsMb;
    state.counters["comparison_MB"] = comparisonMb;
    state.counters["held_per_models"] = (in.modelsMb + comparisonMb) / in.modelsMb;
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

// The JSON text of one comparison of the pair, as `compare --format json`
// makes it (pieces made on every core, handed over in order), into a sink
// that only counts: the writer's cost without the file's.
static void BM_RenderComparisonJson(benchmark::State& state)
{
    const Inputs& in = inputs();
    const reports::Comparison c = reports::compare(in.before, in.after);
    size_t bytes = 0;
    for (auto _ : state) {
        bytes = 0;
        reports::render(c, reports::Format::Json, {}, [&](std::string_view piece) { bytes += piece.size(); });
    }
    state.counters["text_MB"] = double(bytes) / 1e6;
    state.SetBytesProcessed(int64_t(state.iterations()) * int64_t(bytes));
}

namespace {
// Two run sets of kRunsPerSide compact captures of ~2 MB each (a fleet's
// windows, or many lab runs), written once to a temporary directory; or
// the same compressed (*.lockscope.json.zst, as the agent's windows are).
constexpr int kRunsPerSide = 100;

struct RunSets {
    std::vector<std::string> before, after;
    double megabytes = 0;
};

RunSets writeRunSets(const std::string& suffix);

const RunSets& runSets(bool compressed = false)
{
    static const RunSets plain = writeRunSets(".lockscope.json");
    if (!compressed)
        return plain;
    static const RunSets zstd = writeRunSets(".lockscope.json.zst");
    return zstd;
}

RunSets writeRunSets(const std::string& suffix)
{
    namespace fs = std::filesystem;
    static std::vector<std::string> removeAtExit;
    if (removeAtExit.empty())
        std::atexit([] {
            std::error_code ec;
            for (const auto& dir : removeAtExit)
                fs::remove_all(dir, ec);
        });
    const fs::path dir = fs::temp_directory_path() / ("lockscope-runsets-" + std::to_string(::getpid()) + suffix);
    fs::create_directories(dir);
    removeAtExit.push_back(dir.string());
    RunSets r;
    for (int side = 0; side < 2; ++side) {
        const std::string one = (dir / ("side" + std::to_string(side) + suffix)).string();
        writeCapture(testing::makeSyntheticCapture(6000, 600, uint64_t(side) + 1), one,
                     WriteOptions{false, CaptureLayout::Compact});
        for (int i = 0; i < kRunsPerSide; ++i) {
            const fs::path copy = dir / ("side" + std::to_string(side) + "-run" + std::to_string(i) + suffix);
            fs::copy_file(one, copy, fs::copy_options::overwrite_existing);
            (side ? r.after : r.before).push_back(copy.string());
            r.megabytes += double(fs::file_size(copy)) / 1e6;
        }
    }
    return r;
}
} // namespace

// Loading 2 x 100 captures: one by one (arg 0) and loadSets' threads (arg 1),
// side by side in one run; freeing them is left out of the time. Then the
// whole comparison of the two sets.
static void BM_LoadRunSets(benchmark::State& state)
{
    const RunSets& sets = runSets();
    for (auto _ : state) {
        std::pair<std::vector<Capture>, std::vector<Capture>> loaded;
        if (state.range(0) == 0) {
            for (const auto& path : sets.before)
                loaded.first.push_back(reports::loadCapture(path));
            for (const auto& path : sets.after)
                loaded.second.push_back(reports::loadCapture(path));
        } else {
            loaded = reports::loadSets(sets.before, sets.after);
        }
        benchmark::DoNotOptimize(loaded.first.data());
        state.PauseTiming();
        loaded = {};
        state.ResumeTiming();
    }
    state.counters["files_MB"] = sets.megabytes;
}

static void BM_CompareRunSets(benchmark::State& state)
{
    const RunSets& sets = runSets();
    for (auto _ : state) {
        const auto [b, a] = reports::loadSets(sets.before, sets.after);
        const reports::Comparison cmp = reports::compareSets(b, a);
        benchmark::DoNotOptimize(cmp.locks.data());
    }
}

// The same comparison as the CLI makes it: each run folded into its side's
// pool as it is read (compareSetFiles), freeing included.
static void BM_CompareRunSetFiles(benchmark::State& state)
{
    const RunSets& sets = runSets(state.range(0) != 0);
    for (auto _ : state) {
        const reports::Comparison cmp = reports::compareSetFiles(sets.before, sets.after);
        benchmark::DoNotOptimize(cmp.locks.data());
    }
}

BENCHMARK(BM_LoadRunSets)->Arg(0)->Arg(1)->Unit(benchmark::kMillisecond)->Iterations(3)->UseRealTime();
BENCHMARK(BM_CompareRunSets)->Unit(benchmark::kMillisecond)->Iterations(3)->UseRealTime();
BENCHMARK(BM_CompareRunSetFiles)->Arg(0)->Arg(1)->Unit(benchmark::kMillisecond)->Iterations(3)->UseRealTime();
BENCHMARK(BM_ParseBothCaptures)->Unit(benchmark::kMillisecond)->Iterations(3);
BENCHMARK(BM_Compare)->Unit(benchmark::kMillisecond)->Iterations(3);
BENCHMARK(BM_CompareAndRenderJson)->Unit(benchmark::kMillisecond)->Iterations(2);
BENCHMARK(BM_RenderComparisonJson)->Unit(benchmark::kMillisecond)->Iterations(5)->UseRealTime();
BENCHMARK_MAIN();
