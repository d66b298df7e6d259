// SPDX-License-Identifier: GPL-2.0-or-later
#pragma once

// The before/after pairs: one per kernel lock-scaling change. A pair builds a
// Scenario for a variant and a thread count; the harness, the benchmarks and
// the tests all drive scenarios through this one interface.

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "lockscope/scaling/lock_profile.h"

namespace lockscope::scaling {

enum class Variant { Before, After };
const char* variantName(Variant v);

class Scenario {
public:
    virtual ~Scenario() = default;
    // One operation by worker `thread` (0..threads-1); rng is that worker's
    // private state. May block (e.g. a semaphore wait) until shutdown().
    // Returns false if the operation was cut short by shutdown().
    virtual bool op(unsigned thread, uint64_t& rng) = 0;
    // Releases every blocked worker so that op() returns promptly; called once
    // after the stop flag is set, before the workers are joined.
    virtual void shutdown() {}
    // Verifies the structure's invariants once the workers are joined;
    // returns an empty string or a description of the violation.
    virtual std::string check() { return {}; }
    // Lock classes recorded by this scenario (empty when not profiled).
    const std::vector<std::unique_ptr<LockProfile>>& locks() const { return locks_; }

protected:
    // Returns nullptr when not profiled so the wrappers stay bare.
    LockProfile* profile(bool enabled, const std::string& name, const std::string& type)
    {
        if (!enabled)
            return nullptr;
        locks_.push_back(std::make_unique<LockProfile>(name, type));
        return locks_.back().get();
    }

private:
    std::vector<std::unique_ptr<LockProfile>> locks_;
};

struct PairInfo {
    std::string id;             // stable key, e.g. "sem-lock-scope"
    std::string title;
    std::string kernelChange;   // the patch subject it models
    std::string workload;       // the samples/workloads program measuring the real kernel
    std::string before, after;  // what each variant does
    std::function<std::unique_ptr<Scenario>(Variant, unsigned threads, bool profiled)> make;
};

const std::vector<PairInfo>& pairs();

// The sem-postwait scenario: `pairs` worker/partner pairs ping-ponging on one
// array of 2 * pairs + idleSleepers semaphores, idleSleepers more threads
// asleep on semaphores nobody posts. The pair runs it with
// kSemPostWaitIdleSleepers; benchmarks vary it to separate the cost of
// re-trying every sleeper from the cost of waking under the lock.
constexpr unsigned kSemPostWaitIdleSleepers = 256;
std::unique_ptr<Scenario> makeSemPostWait(Variant v, unsigned pairs, unsigned idleSleepers, bool profiled);
const PairInfo* findPair(const std::string& id);

inline uint64_t nextRandom(uint64_t& state) noexcept
{
    state ^= state << 13;
    state ^= state >> 7;
    state ^= state << 17;
    return state;
}

} // namespace lockscope::scaling
