// SPDX-License-Identifier: GPL-2.0-or-later
#pragma once

#include <cstdint>

#include "lockscope/capture/capture.h"

// Deterministic, realistic captures for tests, fixtures and benchmarks. Only
// integer arithmetic is used so that the same inputs give byte-identical
// files on every machine (the checked-in fixtures are compared against them).
namespace lockscope::testing {

enum class SemopScenario {
    Baseline, // before the sem_lock scalability fix: heavy spinning on the array lock
    Patched, // after it: per-semaphore locks, far less contention, more ops/sec
};

// A semop benchmark run as `lockscope record` would save it: locks
// spinlock@sem_lock, rename_lock, spinlock@__lock_timer, rwsem@ipcget, kernel
// stacks through do_semtimedop/ipc code, a user stack, syscall and function
// latencies, a CPU profile, workload results and attached/skipped probes.
Capture makeSemopCapture(SemopScenario scenario);

// A large synthetic capture (for benchmarks and scaling tests): `stacks`
// kernel stacks of 8..24 frames and `locks` locks with a few sites each.
Capture makeSyntheticCapture(uint32_t stacks, uint32_t locks, uint64_t seed = 1);

// Small deterministic PRNG (splitmix64): std distributions are not portable.
class Rng {
public:
    explicit Rng(uint64_t seed)
        : state_(seed)
    {
    }
    uint64_t next() noexcept;
    uint64_t below(uint64_t n) noexcept { return n ? next() % n : 0; }

private:
    uint64_t state_;
};

// Adds `count` samples spread log-normally around median_ns (spread in
// quarter-octaves) to h, using representative values with weights.
void addSpread(Log2Hist& h, Rng& rng, uint64_t count, uint64_t median_ns, unsigned spread_quarter_octaves);

} // namespace lockscope::testing
