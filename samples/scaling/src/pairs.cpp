// SPDX-License-Identifier: GPL-2.0-or-later
// The five scenarios: what each worker does per operation, on which structure.
#include <atomic>
#include <string>
#include <vector>

#include "lockscope/scaling/id_table.h"
#include "lockscope/scaling/ipc_object.h"
#include "lockscope/scaling/pair.h"
#include "lockscope/scaling/path_seqlock.h"
#include "lockscope/scaling/sem_array.h"
#include "lockscope/scaling/timer_table.h"

namespace lockscope::scaling {

const char* variantName(Variant v)
{
    return v == Variant::Before ? "before" : "after";
}

namespace {

// semop(+1) then semop(-1) on a random semaphore of a 128-semaphore object, as
// the benchmark of the patch did (threads x semaphores, no sleeping).
class SemLockScope final : public Scenario {
public:
    SemLockScope(Variant v, bool profiled)
        : object_(makeIpcSemObject(v, kSems, {}, profile(profiled, "sem_array.ipc_perm.lock", "spinlock")))
    {
    }
    bool op(unsigned, uint64_t& rng) override
    {
        int num = static_cast<int>(nextRandom(rng) % kSems);
        Credentials owner{1000, 1000, 0};
        if (object_->semop(owner, num, +1) != SemopResult::Ok || object_->semop(owner, num, -1) != SemopResult::Ok)
            failures_.fetch_add(1, std::memory_order_relaxed);
        return true;
    }
    std::string check() override
    {
        if (auto f = failures_.load())
            return std::to_string(f) + " semop calls failed that must succeed";
        for (int i = 0; i < kSems; ++i)
            if (object_->value(i) != 0)
                return "semaphore " + std::to_string(i) + " ended at " + std::to_string(object_->value(i)) +
                       " after balanced +1/-1 operations";
        return {};
    }

private:
    static constexpr int kSems = 128;
    std::unique_ptr<IpcSemObject> object_;
    std::atomic<uint64_t> failures_{0};
};

// A ring: worker t posts to semaphore t+1 and sleeps on semaphore t until its
// predecessor posts, so every operation is a wakeup of another thread.
class SemPostWait final : public Scenario {
public:
    SemPostWait(Variant v, unsigned threads, bool profiled)
        : threads_(threads),
          array_(makeSemArray(v, static_cast<int>(threads),
                              profile(profiled, v == Variant::Before ? "sem_array.lock" : "sem.lock", "spinlock")))
    {
    }
    bool op(unsigned t, uint64_t&) override
    {
        array_->post(static_cast<int>((t + 1) % threads_));
        return array_->wait(static_cast<int>(t));
    }
    void shutdown() override { array_->remove(); }
    std::string check() override
    {
        array_->remove();  // idempotent; every sleeper must be gone afterwards
        for (unsigned i = 0; i < threads_; ++i) {
            auto a = array_->audit(static_cast<int>(i));
            if (a.value < 0)
                return "semaphore " + std::to_string(i) + " is negative: " + std::to_string(a.value);
            if (a.posted != a.taken + static_cast<unsigned long long>(a.value))
                return "semaphore " + std::to_string(i) + ": posted " + std::to_string(a.posted) + " != taken " +
                       std::to_string(a.taken) + " + value " + std::to_string(a.value);
            if (a.sleepers != 0)
                return "semaphore " + std::to_string(i) + " still has " + std::to_string(a.sleepers) +
                       " sleepers after removal";
        }
        return {};
    }

private:
    unsigned threads_;
    std::unique_ptr<SemArray> array_;
};

// semget(key, IPC_CREAT) on existing keys, with occasional IPC_RMID and
// re-creation so that the table changes under the lookups.
class IpcKeyLookup final : public Scenario {
public:
    static constexpr int32_t kKeys = 2000;
    IpcKeyLookup(Variant v, bool profiled) : table_(makeIdTable(v, profile(profiled, "ipc_ids.rwsem", "rwsem")))
    {
        for (int32_t k = 0; k < kKeys; ++k)
            table_->getOrCreate(kBase + k);
    }
    bool op(unsigned, uint64_t& rng) override
    {
        uint64_t r = nextRandom(rng);
        int32_t key = kBase + static_cast<int32_t>(r % kKeys);
        if ((r >> 32) % 64 == 0) {
            if (auto id = table_->find(key))
                table_->remove(*id);
        }
        if (table_->getOrCreate(key) < 0)
            failures_.fetch_add(1, std::memory_order_relaxed);
        return true;
    }
    std::string check() override
    {
        if (failures_.load())
            return "getOrCreate returned an invalid id";
        auto c = table_->contents();
        if (c.size() != static_cast<size_t>(kKeys))
            return "table holds " + std::to_string(c.size()) + " keys, expected " + std::to_string(kKeys);
        for (int32_t k = 0; k < kKeys; ++k)
            if (c[static_cast<size_t>(k)].first != kBase + k)
                return "key " + std::to_string(kBase + k) + " missing or duplicated";
        return {};
    }

private:
    static constexpr int32_t kBase = 0x4c530000;
    std::unique_ptr<IdTable> table_;
    std::atomic<uint64_t> failures_{0};
};

// timer_gettime() on random timers of a shared table while 1 in 64
// operations deletes a timer and creates a replacement.
class TimerLookup final : public Scenario {
public:
    TimerLookup(Variant v, unsigned threads, bool profiled) : slots_(std::max(64u, threads * 16))
    {
        // Table lock first: harness output lists lock classes in this order.
        LockProfile* tableLock = profile(
            profiled, v == Variant::Before ? "posix_timers.hash_lock" : "posix_timers.writer", "spinlock");
        LockProfile* timerLock = profile(profiled, "k_itimer.it_lock", "spinlock");
        table_ = makeTimerTable(v, tableLock, timerLock);
        for (auto& s : slots_)
            s.store(table_->create(1000000000, 1000000));
    }
    bool op(unsigned, uint64_t& rng) override
    {
        uint64_t r = nextRandom(rng);
        auto& slot = slots_[r % slots_.size()];
        if ((r >> 32) % 64 == 0) {
            int fresh = table_->create(static_cast<int64_t>(r >> 40), 1000000);
            int old = slot.exchange(fresh);
            if (!table_->remove(old))
                failures_.fetch_add(1, std::memory_order_relaxed);
        } else {
            (void)table_->get(slot.load(std::memory_order_relaxed));  // may race with its deletion
        }
        return true;
    }
    std::string check() override
    {
        if (failures_.load())
            return std::to_string(failures_.load()) + " deletions of owned timers failed";
        if (table_->liveCount() != slots_.size())
            return "table holds " + std::to_string(table_->liveCount()) + " timers, expected " +
                   std::to_string(slots_.size());
        for (auto& s : slots_)
            if (!table_->get(s.load()))
                return "live timer " + std::to_string(s.load()) + " not found";
        return {};
    }

private:
    std::vector<std::atomic<int>> slots_;
    std::unique_ptr<TimerTable> table_;
    std::atomic<uint64_t> failures_{0};
};

// Path reads while 1 in 16 operations renames a component. Half of the reads
// are blocking readers from the start (the second, locked pass of
// read_seqbegin_or_lock() that a rename-heavy load forces on most d_path()
// calls); the rest try locklessly first and lock only if that pass raced.
class PathReaders final : public Scenario {
public:
    PathReaders(Variant v, bool profiled)
        : path_(makePathSeqlock(v, profile(profiled, "rename_lock", v == Variant::Before ? "spinlock" : "rwlock")))
    {
    }
    bool op(unsigned, uint64_t& rng) override
    {
        uint64_t r = nextRandom(rng);
        if (r % 16 == 0) {
            path_->rename(static_cast<unsigned>((r >> 8) % PathSeqlock::kComponents), generation_.fetch_add(1) + 1);
        } else if (!path_->read((r >> 4) % 2 == 0).consistent()) {
            torn_.fetch_add(1, std::memory_order_relaxed);
        }
        return true;
    }
    std::string check() override
    {
        if (torn_.load())
            return std::to_string(torn_.load()) + " reads returned a torn path";
        return path_->read().consistent() ? std::string() : "final path is torn";
    }

private:
    std::unique_ptr<PathSeqlock> path_;
    std::atomic<uint64_t> generation_{0};
    std::atomic<uint64_t> torn_{0};
};

} // namespace

const std::vector<PairInfo>& pairs()
{
    static const std::vector<PairInfo> all = {
        {"sem-lock-scope", "semop: object lock across checks vs taken late",
         "ipc,sem: do not hold ipc lock more than necessary", "semop-multi",
         "ipc object lock taken first and held across permission and security checks",
         "checks run without the lock; the lock is taken late, only around the update",
         [](Variant v, unsigned, bool p) { return std::unique_ptr<Scenario>(new SemLockScope(v, p)); }},
        {"sem-postwait", "semtimedop: one lock and pending list vs per-semaphore",
         "ipc/sem.c: optimize semtimedop", "sem-postwait",
         "one array lock and one global pending list scanned on every post",
         "a lock and a pending list per semaphore",
         [](Variant v, unsigned t, bool p) { return std::unique_ptr<Scenario>(new SemPostWait(v, t, p)); }},
        {"ipc-key-lookup", "ipc key lookup: linear id scan vs hash table", "ipc: rhashtable for ipc keys",
         "semget-keys", "semget() scans every allocated id for the key under the ids rwsem",
         "semget() finds the key in a hash table under the ids rwsem",
         [](Variant v, unsigned, bool p) { return std::unique_ptr<Scenario>(new IpcKeyLookup(v, p)); }},
        {"posix-timer-lookup", "timer lookup: global spinlock vs RCU + per-timer lock",
         "posix-timers: RCU conversion", "timer-stress",
         "every lookup takes a global hash spinlock, then the timer lock",
         "lookup under RCU (liburcu), then only the timer lock; deleted timers freed after a grace period",
         [](Variant v, unsigned t, bool p) { return std::unique_ptr<Scenario>(new TimerLookup(v, t, p)); }},
        {"seqlock-readers", "seqlock blocking readers: spinlock vs rwlock",
         "seqlock: use rwlock for blocking readers", "dpath-stress",
         "readers that must block take the writers' spinlock (exclusive)",
         "readers that must block take a rwlock for reading (shared among readers)",
         [](Variant v, unsigned, bool p) { return std::unique_ptr<Scenario>(new PathReaders(v, p)); }},
    };
    return all;
}

const PairInfo* findPair(const std::string& id)
{
    for (const auto& p : pairs())
        if (p.id == id)
            return &p;
    return nullptr;
}

} // namespace lockscope::scaling
