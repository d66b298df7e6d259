// SPDX-License-Identifier: GPL-2.0-or-later
// The agent's sum since start as a fork-heavy machine fills it: windows of
// lock sites on kernel paths it has not seen, built from a pool of shared
// frames as real paths are. Heap bytes a site costs (glibc's mallinfo2, in
// use after minus before) in the sum's compact tables, side by side with the
// same sites as a Capture (what capture() rebuilds for a profile request, and
// what the sum kept before the tables), and the time to add a window.
#include <benchmark/benchmark.h>

#include <malloc.h>

#include <random>
#include <string>

#include "lockscope/agent/capture_sum.h"

namespace {

using namespace lockscope;

constexpr uint32_t kFramePool = 4000;   // kernel functions the paths are drawn from
constexpr uint32_t kDepth = 24;         // frames a stack
constexpr uint32_t kSitesPerWindow = 60;

// One window: kSitesPerWindow sites of one of 8 locks, each on a new path
// (the window's number seeds its frames), waits over a few buckets.
Capture window(uint32_t n)
{
    std::mt19937 rng(n);
    Capture c;
    c.meta.duration_s = 10;
    for (uint32_t l = 0; l < 8; ++l) {
        Lock lock;
        lock.key = "spinlock@caller_" + std::to_string(l);
        lock.type = "spinlock";
        c.locks.push_back(lock);
    }
    for (uint32_t i = 0; i < kSitesPerWindow; ++i) {
        Stack s{i, StackKind::Kernel, {}};
        for (uint32_t d = 0; d < kDepth; ++d) {
            const auto f = uint32_t(rng() % kFramePool);
            s.frames.push_back(Frame{"kernel_function_number_" + std::to_string(f), f % 512, "", 0xffffffff81000000 + f});
        }
        LockSite site;
        site.stack_id = i;
        for (int w = 0; w < 6; ++w)
            site.wait.add(uint64_t(500) << (rng() % 12));
        Lock& lock = c.locks[rng() % c.locks.size()];
        lock.wait.merge(site.wait);
        lock.sites.push_back(site);
        c.stacks.push_back(std::move(s));
    }
    return c;
}

size_t heapInUse()
{
    malloc_trim(0);
    return mallinfo2().uordblks;
}

void BM_SumSinceStart(benchmark::State& state)
{
    const auto windows = uint32_t(state.range(0));
    std::vector<Capture> slices;
    for (uint32_t w = 0; w < windows; ++w)
        slices.push_back(window(w));
    double compact = 0, asCapture = 0;
    for (auto _ : state) {
        const size_t before = heapInUse();
        auto sum = std::make_unique<agent::CaptureSum>(agent::SumLimits{1000000, 5000, false});
        for (const Capture& c : slices)
            sum->add(c);
        state.PauseTiming();
        compact = double(heapInUse() - before);
        const size_t beforeCapture = heapInUse();
        {
            const Capture c = sum->capture();
            asCapture = double(heapInUse() - beforeCapture);
            benchmark::DoNotOptimize(c.stacks.data());
        }
        sum.reset();
        state.ResumeTiming();
    }
    const double sites = double(windows) * kSitesPerWindow;
    state.counters["compact_B_per_site"] = compact / sites;
    state.counters["capture_B_per_site"] = asCapture / sites;
    state.counters["ratio"] = asCapture / compact;
    state.counters["windows_per_s"] = benchmark::Counter(double(windows), benchmark::Counter::kIsIterationInvariantRate);
}
BENCHMARK(BM_SumSinceStart)->Arg(100)->Arg(1000)->Unit(benchmark::kMillisecond);

} // namespace

BENCHMARK_MAIN();
