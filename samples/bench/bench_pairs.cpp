// SPDX-License-Identifier: GPL-2.0-or-later
// Before vs after for each pair, side by side in one row: every iteration runs
// both variants back to back (alternating which goes first) with the same
// number of operations per thread, so machine load drifts hit both alike.
// Counters: before/after throughput in Mops/s and their ratio after/before.

#include <benchmark/benchmark.h>

#include "lockscope/scaling/runner.h"

using namespace lockscope::scaling;

namespace {

void runSideBySide(benchmark::State& state, const PairInfo& pair, unsigned threads, uint64_t opsPerThread)
{
    double secs[2] = {0, 0};
    uint64_t ops[2] = {0, 0};
    bool afterFirst = false;
    for (auto _ : state) {
        double iteration = 0;
        for (int k = 0; k < 2; ++k) {
            int which = (k == 0) == afterFirst ? 1 : 0;
            PointResult r = runOps(pair, which == 0 ? Variant::Before : Variant::After, threads, opsPerThread, false);
            if (!r.violation.empty()) {
                state.SkipWithError(r.violation.c_str());
                return;
            }
            secs[which] += r.duration_s;
            ops[which] += r.ops;
            iteration += r.duration_s;
        }
        afterFirst = !afterFirst;
        state.SetIterationTime(iteration);
    }
    double before = static_cast<double>(ops[0]) / secs[0], after = static_cast<double>(ops[1]) / secs[1];
    state.counters["before_Mops"] = before / 1e6;
    state.counters["after_Mops"] = after / 1e6;
    state.counters["after/before"] = after / before;
}

void BM_Pair(benchmark::State& state)
{
    const PairInfo& pair = pairs()[static_cast<size_t>(state.range(0))];
    state.SetLabel(pair.id);
    runSideBySide(state, pair, static_cast<unsigned>(state.range(1)), static_cast<uint64_t>(state.range(2)));
}

void pairArgs(benchmark::internal::Benchmark* b)
{
    b->ArgNames({"pair", "threads", "ops"});
    for (int64_t p = 0; p < static_cast<int64_t>(pairs().size()); ++p) {
        // The id table's linear scan makes its ops ~10x slower, and a
        // post/wait round trip is two sleeps and two wakeups: fewer of them.
        const std::string& id = pairs()[static_cast<size_t>(p)].id;
        int64_t ops = id == "ipc-key-lookup" ? 5000 : id == "sem-postwait" ? 20000 : 50000;
        for (int64_t t : {1, 2, 4})
            b->Args({p, t, ops});
    }
}

// sem-postwait with 0, the pair's default and 4x as many idle sleepers: with
// none, "before" differs only by its one lock and by waking under it; the
// idle sleepers add the cost of re-trying every pending operation on each post.
void BM_SemPostWaitSleepers(benchmark::State& state)
{
    PairInfo pair = *findPair("sem-postwait");
    const auto idle = static_cast<unsigned>(state.range(0));
    pair.make = [idle](Variant v, unsigned threads, bool profiled) {
        return makeSemPostWait(v, threads, idle, profiled);
    };
    state.SetLabel("sem-postwait");
    runSideBySide(state, pair, static_cast<unsigned>(state.range(1)), 10000);
}

} // namespace

BENCHMARK(BM_Pair)->Apply(pairArgs)->UseManualTime()->Unit(benchmark::kMillisecond)->MinTime(0.5);
BENCHMARK(BM_SemPostWaitSleepers)
    ->ArgNames({"idle", "threads"})
    ->ArgsProduct({{0, kSemPostWaitIdleSleepers, 4 * kSemPostWaitIdleSleepers}, {1, 2}})
    ->UseManualTime()
    ->Unit(benchmark::kMillisecond)
    ->MinTime(0.5);

BENCHMARK_MAIN();
