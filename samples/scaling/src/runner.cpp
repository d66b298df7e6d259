// SPDX-License-Identifier: GPL-2.0-or-later
#include "lockscope/scaling/runner.h"

#include <atomic>
#include <chrono>
#include <thread>

namespace lockscope::scaling {

namespace {

struct alignas(64) Count {
    uint64_t ops = 0;
};

PointResult run(const PairInfo& pair, Variant variant, unsigned threads, double seconds, uint64_t opsPerThread,
                bool profiled)
{
    auto scenario = pair.make(variant, threads, profiled);
    std::atomic<bool> stop{false};
    std::atomic<unsigned> ready{0};
    std::atomic<bool> go{false};
    std::vector<Count> counts(threads);
    std::vector<std::thread> pool;
    for (unsigned t = 0; t < threads; ++t)
        pool.emplace_back([&, t] {
            uint64_t rng = 0x9E3779B97F4A7C15ull * (t + 1) + 12345;
            ready.fetch_add(1);
            while (!go.load(std::memory_order_acquire))
                std::this_thread::yield();
            uint64_t ops = 0;
            while (!stop.load(std::memory_order_relaxed) && (opsPerThread == 0 || ops < opsPerThread))
                if (scenario->op(t, rng))
                    ++ops;
            counts[t].ops = ops;
        });
    while (ready.load() < threads)
        std::this_thread::yield();
    auto start = std::chrono::steady_clock::now();
    go.store(true, std::memory_order_release);
    if (opsPerThread == 0) {
        std::this_thread::sleep_for(std::chrono::duration<double>(seconds));
        stop.store(true);
        scenario->shutdown();
        for (auto& th : pool)
            th.join();
    } else {
        // Quota runs end by themselves: every scenario balances its blocking
        // operations across threads (each wait has a matching post).
        for (auto& th : pool)
            th.join();
    }
    PointResult r;
    r.duration_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    r.threads = threads;
    for (const auto& c : counts)
        r.ops += c.ops;
    if (opsPerThread != 0)
        scenario->shutdown();
    r.violation = scenario->check();
    for (const auto& l : scenario->locks())
        r.locks.push_back({l->name(), l->type(), l->wait(), l->hold()});
    return r;
}

} // namespace

PointResult runPoint(const PairInfo& pair, Variant variant, unsigned threads, double seconds, bool profiled)
{
    return run(pair, variant, threads, seconds, 0, profiled);
}

PointResult runOps(const PairInfo& pair, Variant variant, unsigned threads, uint64_t opsPerThread, bool profiled)
{
    return run(pair, variant, threads, 0, opsPerThread, profiled);
}

} // namespace lockscope::scaling
