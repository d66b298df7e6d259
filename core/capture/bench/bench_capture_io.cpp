// SPDX-License-Identifier: GPL-2.0-or-later
// Load and save of a large capture (100k stacks, 10k locks): throughput in
// MB/s, next to plain nlohmann parse/dump of the same text so that the cost
// of validation and model building reads as a ratio, and peak RSS of a load
// measured in a fresh process (this one's high-water mark includes the
// generator's capture).
#include <benchmark/benchmark.h>

#include <spawn.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "lockscope/capture/io.h"
#include "sample_capture.h"

extern char** environ;

namespace {

using namespace lockscope;

constexpr uint32_t kStacks = 100000;
constexpr uint32_t kLocks = 10000;
constexpr const char* kChildEnv = "LOCKSCOPE_BENCH_RSS_CHILD";

double maxRssMB()
{
    rusage ru {};
    getrusage(RUSAGE_SELF, &ru);
    return static_cast<double>(ru.ru_maxrss) / 1024.0;
}

// ru_maxrss survives execve(), so a spawned child would report its parent's
// high-water mark; VmHWM belongs to the address space and starts afresh.
double addressSpacePeakMB()
{
    std::ifstream status("/proc/self/status");
    std::string line;
    while (std::getline(status, line))
        if (line.rfind("VmHWM:", 0) == 0)
            return std::atof(line.c_str() + 6) / 1024.0;
    return -1;
}

double currentRssMB()
{
    std::ifstream status("/proc/self/status");
    std::string line;
    while (std::getline(status, line))
        if (line.rfind("VmRSS:", 0) == 0)
            return std::atof(line.c_str() + 6) / 1024.0;
    return -1;
}

double modelMB = 0; // RSS the in-memory Capture takes

// The same capture in each layout: version 1 (today's files), compact, compact + zstd.
struct Data {
    std::string dir;
    std::string path;    // version 1
    std::string compact; // version 2
    std::string zstd;    // version 2, *.zst
    std::string text;    // version 1's text
    Capture capture;
};

uint64_t fileBytes(const std::string& p) { return std::filesystem::file_size(p); }

Data& data()
{
    static Data* d = [] {
        auto* x = new Data;
        char tmpl[] = "/tmp/lockscope-bench-XXXXXX";
        if (!mkdtemp(tmpl)) {
            std::perror("mkdtemp");
            std::exit(1);
        }
        x->dir = tmpl;
        x->path = x->dir + "/large.lockscope.json";
        const double before = currentRssMB();
        x->capture = testing::makeSyntheticCapture(kStacks, kLocks);
        modelMB = currentRssMB() - before;
        writeCapture(x->capture, x->path);
        x->compact = x->dir + "/large-compact.lockscope.json";
        x->zstd = x->dir + "/large-compact.lockscope.json.zst";
        writeCapture(x->capture, x->compact, WriteOptions { .layout = CaptureLayout::Compact });
        writeCapture(x->capture, x->zstd, WriteOptions { .layout = CaptureLayout::Compact });
        std::ifstream in(x->path, std::ios::binary);
        std::stringstream ss;
        ss << in.rdbuf();
        x->text = ss.str();
        std::atexit([] { std::filesystem::remove_all(data().dir); });
        return x;
    }();
    return *d;
}

// Runs this binary again as a child that only loads (or generates and saves)
// the capture and reports its peak RSS, so the figure is that operation's own.
double childPeakMB(const std::string& mode, const std::string& path)
{
    int fds[2];
    if (pipe(fds) != 0)
        return -1;
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_adddup2(&actions, fds[1], STDOUT_FILENO);
    posix_spawn_file_actions_addclose(&actions, fds[0]);
    const std::string env = std::string(kChildEnv) + "=" + mode + ":" + path;
    char* childEnv[] = { const_cast<char*>(env.c_str()), nullptr };
    char self[] = "/proc/self/exe";
    char* argv[] = { self, nullptr };
    pid_t pid = 0;
    const int rc = posix_spawn(&pid, "/proc/self/exe", &actions, nullptr, argv, childEnv);
    posix_spawn_file_actions_destroy(&actions);
    close(fds[1]);
    if (rc != 0) {
        close(fds[0]);
        return -1;
    }
    char buf[64] = {};
    const ssize_t n = read(fds[0], buf, sizeof buf - 1);
    close(fds[0]);
    int status = 0;
    waitpid(pid, &status, 0);
    return n > 0 && WIFEXITED(status) && WEXITSTATUS(status) == 0 ? std::atof(buf) : -1;
}

int childMain(const std::string& spec)
{
    const auto colon = spec.find(':');
    const std::string mode = spec.substr(0, colon);
    const std::string path = spec.substr(colon + 1);
    try {
        if (mode == "load") {
            const Capture c = readCapture(path);
            std::printf("%.1f\n", addressSpacePeakMB());
            return c.stacks.size() == kStacks ? 0 : 1;
        }
        // save: the peak minus what the model itself needs is the writer's cost.
        // save2: the other capture of the pair (another seed), for end-to-end runs
        // of `lockscope compare` (README).
        const Capture c = testing::makeSyntheticCapture(kStacks, kLocks, mode == "save2" ? 2 : 1);
        writeCapture(c, path);
        std::printf("%.1f\n", addressSpacePeakMB());
        return 0;
    } catch (const CaptureError& e) {
        std::fprintf(stderr, "%s\n", e.what());
        return 1;
    }
}

void BM_LoadCapture(benchmark::State& state)
{
    Data& d = data();
    for (auto _ : state) {
        Capture c = readCapture(d.path);
        benchmark::DoNotOptimize(c.stacks.data());
    }
    state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) * static_cast<int64_t>(d.text.size()));
    state.counters["file_MB"] = static_cast<double>(d.text.size()) / 1e6;
    state.counters["load_peak_rss_MB"] = childPeakMB("load", d.path);
    state.counters["process_peak_rss_MB"] = maxRssMB();
}
BENCHMARK(BM_LoadCapture)->Unit(benchmark::kMillisecond)->MinTime(2.0);

// Version 1 (today's files) and the compact layout, plain and zstd, loaded
// one after the other in every iteration: the speedups and size ratios are
// measured side by side on the same machine state.
void BM_LoadLayoutsSideBySide(benchmark::State& state)
{
    Data& d = data();
    using Clock = std::chrono::steady_clock;
    double full = 0, compact = 0, zstd = 0;
    auto timed = [](const std::string& p) {
        const auto t0 = Clock::now();
        Capture c = readCapture(p);
        benchmark::DoNotOptimize(c.stacks.data());
        return std::chrono::duration<double>(Clock::now() - t0).count();
    };
    for (auto _ : state) {
        full += timed(d.path);
        compact += timed(d.compact);
        zstd += timed(d.zstd);
    }
    const auto n = static_cast<double>(state.iterations());
    state.counters["v1_load_ms"] = full / n * 1e3;
    state.counters["compact_load_ms"] = compact / n * 1e3;
    state.counters["zstd_load_ms"] = zstd / n * 1e3;
    state.counters["compact_speedup"] = full / compact;
    state.counters["zstd_speedup"] = full / zstd;
    state.counters["v1_MB"] = static_cast<double>(fileBytes(d.path)) / 1e6;
    state.counters["compact_MB"] = static_cast<double>(fileBytes(d.compact)) / 1e6;
    state.counters["zstd_MB"] = static_cast<double>(fileBytes(d.zstd)) / 1e6;
    state.counters["compact_smaller"] = static_cast<double>(fileBytes(d.path)) / static_cast<double>(fileBytes(d.compact));
    state.counters["zstd_smaller"] = static_cast<double>(fileBytes(d.path)) / static_cast<double>(fileBytes(d.zstd));
    state.counters["compact_peak_rss_MB"] = childPeakMB("load", d.compact);
    state.counters["zstd_peak_rss_MB"] = childPeakMB("load", d.zstd);
    state.counters["v1_peak_rss_MB"] = childPeakMB("load", d.path);
    state.counters["model_rss_MB"] = modelMB;
}
BENCHMARK(BM_LoadLayoutsSideBySide)->Unit(benchmark::kMillisecond)->Iterations(3);

void BM_SaveCompactZstd(benchmark::State& state)
{
    Data& d = data();
    const std::string out = d.dir + "/save.lockscope.json.zst";
    for (auto _ : state)
        writeCapture(d.capture, out, WriteOptions { .layout = CaptureLayout::Compact });
    state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) * static_cast<int64_t>(d.text.size()));
}
BENCHMARK(BM_SaveCompactZstd)->Unit(benchmark::kMillisecond)->MinTime(2.0);

void BM_SaveCapture(benchmark::State& state)
{
    Data& d = data();
    const std::string out = d.dir + "/save.lockscope.json";
    for (auto _ : state)
        writeCapture(d.capture, out);
    state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) * static_cast<int64_t>(d.text.size()));
    state.counters["save_peak_rss_MB"] = childPeakMB("save", d.dir + "/child.lockscope.json");
    state.counters["model_rss_MB"] = modelMB;
}
BENCHMARK(BM_SaveCapture)->Unit(benchmark::kMillisecond)->MinTime(2.0);

// The floor: parsing the same text into a DOM without validation or model.
void BM_RawJsonParse(benchmark::State& state)
{
    Data& d = data();
    for (auto _ : state) {
        auto j = nlohmann::json::parse(d.text);
        benchmark::DoNotOptimize(j.size());
    }
    state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) * static_cast<int64_t>(d.text.size()));
}
BENCHMARK(BM_RawJsonParse)->Unit(benchmark::kMillisecond)->MinTime(2.0);

// The floor for saving: dumping an already built DOM, no file, no fsync.
void BM_RawJsonDump(benchmark::State& state)
{
    Data& d = data();
    const auto j = nlohmann::json::parse(d.text);
    for (auto _ : state) {
        std::string s = j.dump();
        benchmark::DoNotOptimize(s.data());
    }
    state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) * static_cast<int64_t>(d.text.size()));
}
BENCHMARK(BM_RawJsonDump)->Unit(benchmark::kMillisecond)->MinTime(2.0);

} // namespace

int main(int argc, char** argv)
{
    if (const char* spec = std::getenv(kChildEnv))
        return childMain(spec);
    benchmark::Initialize(&argc, argv);
    if (benchmark::ReportUnrecognizedArguments(argc, argv))
        return 1;
    benchmark::RunSpecifiedBenchmarks();
    benchmark::Shutdown();
    return 0;
}
