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

#include <simdjson.h>

#include "lockscope/capture/io.h"
#include "sample_capture.h"

extern char** environ;

namespace {

using namespace lockscope;

constexpr uint32_t kStacks = 100000;
constexpr uint32_t kLocks = 10000;
constexpr const char* kChildEnv = "LOCKSCOPE_BENCH_RSS_CHILD";
// A capture to measure instead of the synthetic one (a real `record -a`),
// rewritten in each layout by the bench.
constexpr const char* kCaptureEnv = "LOCKSCOPE_BENCH_CAPTURE";

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
        const char* given = std::getenv(kCaptureEnv);
        x->capture = given ? readCapture(given) : testing::makeSyntheticCapture(kStacks, kLocks);
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

std::string slurp(const std::string& p)
{
    std::ifstream in(p, std::ios::binary);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

// The reference reader (nlohmann SAX) on a file, read the way readCapture reads it.
Capture readReference(const std::string& p) { return parseCaptureReference(slurp(p)); }

int childMain(const std::string& spec)
{
    const auto colon = spec.find(':');
    const std::string mode = spec.substr(0, colon);
    const std::string path = spec.substr(colon + 1);
    try {
        if (mode == "dom") { // simdjson's DOM of the file, no model
            const simdjson::padded_string text(slurp(path));
            simdjson::dom::parser parser;
            simdjson::dom::element root;
            const bool ok = parser.parse(text).get(root) == simdjson::SUCCESS;
            std::printf("%.1f\n", addressSpacePeakMB());
            return ok ? 0 : 1;
        }
        if (mode == "load" || mode == "loadref") {
            const Capture c = mode == "load" ? readCapture(path) : readReference(path);
            benchmark::DoNotOptimize(c.stacks.data());
            std::printf("%.1f\n", addressSpacePeakMB());
            return 0;
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

// Version 1 (today's files) and the compact layout, plain and zstd, each
// loaded by the reader (readCapture, simdjson) and by the reference reader
// one after the other in every iteration: the speedups and size ratios are
// measured side by side on the same machine state. LOCKSCOPE_BENCH_CAPTURE
// runs it on a given capture instead of the synthetic one.
void BM_LoadLayoutsSideBySide(benchmark::State& state)
{
    Data& d = data();
    using Clock = std::chrono::steady_clock;
    struct Layout {
        const char* name;
        std::string path;
        double reader = 0;    // seconds, summed over iterations
        double reference = 0;
    };
    Layout layouts[] = { { "v1", d.path }, { "compact", d.compact }, { "zstd", d.zstd } };
    auto timed = [](auto read, const std::string& p) {
        const auto t0 = Clock::now();
        Capture c = read(p);
        benchmark::DoNotOptimize(c.stacks.data());
        return std::chrono::duration<double>(Clock::now() - t0).count();
    };
    double copy = 0; // the floor of any reader: allocating and filling the model, no parsing
    for (auto _ : state) {
        for (Layout& l : layouts) {
            l.reference += timed(readReference, l.path);
            l.reader += timed([](const std::string& p) { return readCapture(p); }, l.path);
        }
        copy += timed([&](const std::string&) { return d.capture; }, d.path);
    }
    const auto n = static_cast<double>(state.iterations());
    const double v1Bytes = static_cast<double>(fileBytes(d.path));
    for (const Layout& l : layouts) {
        const std::string k = l.name;
        const double bytes = static_cast<double>(fileBytes(l.path));
        state.counters[k + "_MB"] = bytes / 1e6;
        state.counters[k + "_smaller"] = v1Bytes / bytes;
        state.counters[k + "_ref_ms"] = l.reference / n * 1e3;
        state.counters[k + "_new_ms"] = l.reader / n * 1e3;
        state.counters[k + "_speedup"] = l.reference / l.reader;
        state.counters[k + "_new_MBps"] = bytes / 1e6 / (l.reader / n);
        state.counters[k + "_ref_MBps"] = bytes / 1e6 / (l.reference / n);
        state.counters[k + "_new_rss_MB"] = childPeakMB("load", l.path);
        state.counters[k + "_ref_rss_MB"] = childPeakMB("loadref", l.path);
    }
    state.counters["model_rss_MB"] = modelMB;
    state.counters["model_copy_ms"] = copy / n * 1e3;
}
BENCHMARK(BM_LoadLayoutsSideBySide)->Unit(benchmark::kMillisecond)->Iterations(3);

// The other simdjson API for the record: a DOM parse alone (no model) of
// version 1, its tape sized for the whole document.
void BM_RawSimdjsonDom(benchmark::State& state)
{
    Data& d = data();
    const simdjson::padded_string text(d.text);
    simdjson::dom::parser parser;
    for (auto _ : state) {
        simdjson::dom::element root;
        if (parser.parse(text).get(root) != simdjson::SUCCESS)
            state.SkipWithError("simdjson DOM parse failed");
        benchmark::DoNotOptimize(root);
    }
    state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) * static_cast<int64_t>(d.text.size()));
    state.counters["v1_dom_peak_rss_MB"] = childPeakMB("dom", d.path);
    state.counters["compact_dom_peak_rss_MB"] = childPeakMB("dom", d.compact);
}
BENCHMARK(BM_RawSimdjsonDom)->Unit(benchmark::kMillisecond)->MinTime(2.0);

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
