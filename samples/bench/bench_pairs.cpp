// SPDX-License-Identifier: GPL-2.0-or-later
// Before vs after for each pair, side by side in one row: every iteration runs
// both variants back to back (alternating which goes first) with the same
// number of operations per thread, so machine load drifts hit both alike.
// Counters: before/after throughput in Mops/s and their ratio after/before.

#include <benchmark/benchmark.h>

#include "lockscope/scaling/runner.h"

using namespace lockscope::scaling;

namespace {

void BM_Pair(benchmark::State& state)
{
    const PairInfo& pair = pairs()[static_cast<size_t>(state.range(0))];
    const auto threads = static_cast<unsigned>(state.range(1));
    const auto opsPerThread = static_cast<uint64_t>(state.range(2));
    state.SetLabel(pair.id);
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

void pairArgs(benchmark::internal::Benchmark* b)
{
    b->ArgNames({"pair", "threads", "ops"});
    for (int64_t p = 0; p < static_cast<int64_t>(pairs().size()); ++p) {
        // The id table's linear scan makes its ops ~10x slower; fewer of them.
        int64_t ops = pairs()[static_cast<size_t>(p)].id == "ipc-key-lookup" ? 5000 : 50000;
        for (int64_t t : {1, 2, 4})
            b->Args({p, t, ops});
    }
}

} // namespace

BENCHMARK(BM_Pair)->Apply(pairArgs)->UseManualTime()->Unit(benchmark::kMillisecond)->MinTime(0.5);

BENCHMARK_MAIN();
