// SPDX-License-Identifier: GPL-2.0-or-later
// The five scenarios: what each worker does per operation, on which structure.
#include <atomic>
#include <string>
#include <thread>
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

// N pairs on one array of 2N + idle semaphores, after the post/wait benchmark
// of the change (Chris Mason's sembench: 2048 threads, 1900 of them asleep on
// the array). Worker t posts semaphore 2t and sleeps on
// 2t+1; its partner, a thread of the scenario, sleeps on 2t and then posts
// 2t+1. One op is a round trip: two posts, two blocking waits, two wakeups.
// The idle sleepers wait on semaphores nobody posts: every "before" post
// re-tries them (one pending list for the array) under the array lock; the
// "after" array never looks at them.
class SemPostWait final : public Scenario {
public:
    SemPostWait(Variant v, unsigned threads, unsigned idleSleepers, bool profiled)
        : pairs_(threads),
          idle_(idleSleepers),
          array_(makeSemArray(v, static_cast<int>(2 * threads + idleSleepers),
                              profile(profiled, v == Variant::Before ? "sem_array.lock" : "sem.lock", "spinlock"))),
          workerWaits_(threads),
          partnerWaits_(threads)
    {
        try {
            start();
        } catch (...) {
            shutdown();  // e.g. thread creation failed: release and join the ones that started
            throw;
        }
    }
    ~SemPostWait() override { shutdown(); }

    bool op(unsigned t, uint64_t&) override
    {
        array_->post(static_cast<int>(2 * t));
        if (!array_->wait(static_cast<int>(2 * t + 1)))
            return false;
        ++workerWaits_[t].n;
        return true;
    }
    void shutdown() override
    {
        if (stopped_)
            return;
        stopped_ = true;
        array_->remove();  // releases the partners and the idle sleepers
        for (auto& f : fixtures_)
            f.join();
    }
    std::string check() override
    {
        shutdown();
        const auto nsems = static_cast<int>(2 * pairs_ + idle_);
        std::vector<SemArray::Audit> a;
        for (int i = 0; i < nsems; ++i) {
            a.push_back(array_->audit(i));
            const auto& s = a.back();
            auto name = "semaphore " + std::to_string(i);
            if (s.value < 0)
                return name + " is negative: " + std::to_string(s.value);
            if (s.posted != s.taken + static_cast<unsigned long long>(s.value))
                return name + ": posted " + std::to_string(s.posted) + " != taken " + std::to_string(s.taken) +
                       " + value " + std::to_string(s.value);
            if (s.sleepers != 0)
                return name + " still has " + std::to_string(s.sleepers) + " sleepers after removal";
        }
        for (unsigned p = 0; p < pairs_; ++p) {
            const auto& ping = a[2 * p];
            const auto& pong = a[2 * p + 1];
            auto name = "pair " + std::to_string(p);
            if (ping.taken != partnerWaits_[p].n || pong.taken != workerWaits_[p].n)
                return name + ": the array granted " + std::to_string(ping.taken) + "/" +
                       std::to_string(pong.taken) + " waits but the threads returned from " +
                       std::to_string(partnerWaits_[p].n) + "/" + std::to_string(workerWaits_[p].n);
            // One token circulates: worker posts ping, partner takes it and
            // posts pong, worker takes that. Posts after removal are no-ops.
            if (ping.posted < pong.taken || ping.posted > pong.taken + 1 || pong.posted > ping.taken ||
                pong.posted + 1 < ping.taken)
                return name + ": more than one token in flight (ping posted " + std::to_string(ping.posted) +
                       " taken " + std::to_string(ping.taken) + ", pong posted " + std::to_string(pong.posted) +
                       " taken " + std::to_string(pong.taken) + ")";
        }
        for (unsigned i = 0; i < idle_; ++i)
            if (a[2 * pairs_ + i].posted != 0)
                return "idle semaphore " + std::to_string(2 * pairs_ + i) + " was posted";
        if (idleGranted_.load() != 0)
            return std::to_string(idleGranted_.load()) + " idle sleepers were granted a never-posted semaphore";
        return {};
    }

private:
    void start()
    {
        for (unsigned p = 0; p < pairs_; ++p)
            fixtures_.emplace_back([this, p] {
                while (array_->wait(static_cast<int>(2 * p))) {
                    ++partnerWaits_[p].n;
                    array_->post(static_cast<int>(2 * p + 1));
                }
            });
        for (unsigned i = 0; i < idle_; ++i)
            fixtures_.emplace_back([this, i] {
                if (array_->wait(static_cast<int>(2 * pairs_ + i)))
                    idleGranted_.fetch_add(1);
            });
        // Every measurement starts with all idle sleepers queued.
        for (unsigned i = 0; i < idle_; ++i)
            while (array_->audit(static_cast<int>(2 * pairs_ + i)).sleepers == 0)
                std::this_thread::yield();
    }

    struct alignas(64) Count {
        uint64_t n = 0;  // written by one thread, read after it is joined
    };
    unsigned pairs_, idle_;
    std::unique_ptr<SemArray> array_;
    std::vector<Count> workerWaits_, partnerWaits_;
    std::atomic<unsigned> idleGranted_{0};
    std::vector<std::thread> fixtures_;
    bool stopped_ = false;
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

std::unique_ptr<Scenario> makeSemPostWait(Variant v, unsigned pairs, unsigned idleSleepers, bool profiled)
{
    return std::make_unique<SemPostWait>(v, pairs, idleSleepers, profiled);
}

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
         "N pairs on one array of 2N + " + std::to_string(kSemPostWaitIdleSleepers) + " semaphores (" +
             std::to_string(kSemPostWaitIdleSleepers) +
             " idle sleepers): one array lock, one pending list; every post re-tries all sleepers and wakes"
             " them with the lock held",
         "a lock and a pending list per semaphore; a post looks only at its semaphore's sleepers and wakes"
         " them after dropping the lock (wake_q)",
         [](Variant v, unsigned t, bool p) { return makeSemPostWait(v, t, kSemPostWaitIdleSleepers, p); }},
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
