// SPDX-License-Identifier: GPL-2.0-or-later
#include "lockscope/scaling/timer_table.h"

#include <atomic>
#include <condition_variable>
#include <mutex>
#include <thread>
#include <vector>

#include "lockscope/scaling/locks.h"
#include "rcu.h"

namespace lockscope::scaling {

namespace {

constexpr size_t kBuckets = 512;
constexpr uint64_t kLiveMagic = 0x54494d4552ull;  // "TIMER"
constexpr uint64_t kDeadMagic = 0xdeadull;

struct Timer {
    explicit Timer(int timerId, LockProfile* p) : id(timerId), lock(p) {}
    const int id;
    Instrumented<SpinLock> lock;
    // Under lock:
    uint64_t magic = kLiveMagic;
    bool live = true;  // cleared by delete before unlinking; lookups re-check it (it_signal)
    TimerValue value;
    // Chain link, published to RCU readers with release/acquire.
    Timer* next = nullptr;
};

size_t bucketOf(int id)
{
    return static_cast<size_t>(static_cast<uint32_t>(id) * 2654435761u) % kBuckets;
}

class TableBase : public TimerTable {
public:
    explicit TableBase(LockProfile* timerLock) : timerProfile_(timerLock) {}

    std::optional<TimerValue> get(int id) override
    {
        std::optional<TimerValue> out;
        withLocked(id, [&](Timer& t) { out = t.value; });
        return out;
    }
    bool set(int id, int64_t expires, int64_t interval) override
    {
        return withLocked(id, [&](Timer& t) {
            if (t.value.expires_ns < expires && t.value.interval_ns > 0)
                t.value.overruns += 1;
            t.value.expires_ns = expires;
            t.value.interval_ns = interval;
        });
    }
    size_t liveCount() const override { return live_.load(std::memory_order_relaxed); }

protected:
    template <class F>
    bool withLocked(int id, F&& f)
    {
        Timer* t = lockTimer(id);
        if (!t)
            return false;
        if (t->magic != kLiveMagic)  // a freed or recycled timer would fail this
            __builtin_trap();
        f(*t);
        t->lock.unlock();
        return true;
    }
    // Returns the timer locked, or nullptr (__lock_timer()).
    virtual Timer* lockTimer(int id) = 0;

    static Timer* findIn(Timer* const& head, int id)
    {
        for (Timer* t = rcu::dereference(head); t; t = rcu::dereference(t->next))
            if (t->id == id)
                return t;
        return nullptr;
    }
    // Requires the table lock.
    static void unlink(Timer*& head, Timer* victim)
    {
        Timer** link = &head;
        while (*link != victim)
            link = &(*link)->next;
        rcu::assign(*link, victim->next);
    }

    LockProfile* timerProfile_;
    std::atomic<int> nextId_{1};
    std::atomic<size_t> live_{0};
    std::vector<Timer*> buckets_ = std::vector<Timer*>(kBuckets, nullptr);
};

class GlobalLockTable final : public TableBase {
public:
    GlobalLockTable(LockProfile* tableLock, LockProfile* timerLock) : TableBase(timerLock), lock_(tableLock) {}
    ~GlobalLockTable() override
    {
        for (Timer* head : buckets_)
            while (head) {
                Timer* next = head->next;
                delete head;
                head = next;
            }
    }

    int create(int64_t expires, int64_t interval) override
    {
        auto* t = new Timer(nextId_.fetch_add(1), timerProfile_);
        t->value = {expires, interval, 0};
        Guard g(lock_);
        Timer*& head = buckets_[bucketOf(t->id)];
        t->next = head;
        head = t;
        live_.fetch_add(1, std::memory_order_relaxed);
        return t->id;
    }

    bool remove(int id) override
    {
        Timer* t = nullptr;
        {
            Guard g(lock_);
            t = findIn(buckets_[bucketOf(id)], id);
            if (!t)
                return false;
            // Lookups lock the timer while holding the table lock, so once we
            // hold both no lookup can still be using it after we unlink it.
            t->lock.lock();
            unlink(buckets_[bucketOf(id)], t);
            t->live = false;
            t->magic = kDeadMagic;
            t->lock.unlock();
            live_.fetch_sub(1, std::memory_order_relaxed);
        }
        delete t;
        return true;
    }

protected:
    Timer* lockTimer(int id) override
    {
        Guard g(lock_);
        Timer* t = findIn(buckets_[bucketOf(id)], id);
        if (t)
            t->lock.lock();
        return t;
    }

private:
    Instrumented<SpinLock> lock_;
};

// Deleted timers go to a reclaimer thread that frees them in batches after a
// grace period (the kernel's RCU callback processing), so a deleting task never
// waits for readers. liburcu's own call_rcu() would do the same, but its
// internals are invisible to ThreadSanitizer; this thread is not.
class Reclaimer {
public:
    Reclaimer() : thread_([this] { run(); }) {}
    ~Reclaimer()
    {
        {
            std::lock_guard<std::mutex> g(mutex_);
            stopping_ = true;
        }
        wake_.notify_one();
        thread_.join();
    }
    void retire(Timer* t)
    {
        bool full = false;
        {
            std::lock_guard<std::mutex> g(mutex_);
            pending_.push_back(t);
            full = pending_.size() >= kBatch;
        }
        if (full)
            wake_.notify_one();
    }

private:
    // Kernel grace periods last milliseconds and retire thousands of objects
    // each; batching as deeply keeps the grace-period cost per deletion small.
    static constexpr size_t kBatch = 512;
    void run()
    {
        std::unique_lock<std::mutex> g(mutex_);
        for (;;) {
            wake_.wait(g, [&] { return stopping_ || pending_.size() >= kBatch; });
            std::vector<Timer*> batch;
            batch.swap(pending_);
            bool last = stopping_;
            g.unlock();
            if (!batch.empty()) {
                rcu::synchronize();
                for (Timer* t : batch) {
                    t->magic = kDeadMagic;
                    delete t;
                }
            }
            g.lock();
            if (last && pending_.empty())
                return;
        }
    }
    std::mutex mutex_;
    std::condition_variable wake_;
    std::vector<Timer*> pending_;
    bool stopping_ = false;
    std::thread thread_;  // last: starts after the members it uses exist
};

class RcuTable final : public TableBase {
public:
    RcuTable(LockProfile* tableLock, LockProfile* timerLock) : TableBase(timerLock), writer_(tableLock) {}
    ~RcuTable() override
    {
        reclaimer_.reset();  // frees every retired timer after a last grace period
        for (Timer* head : buckets_)
            while (head) {
                Timer* next = head->next;
                delete head;
                head = next;
            }
    }

    int create(int64_t expires, int64_t interval) override
    {
        auto* t = new Timer(nextId_.fetch_add(1), timerProfile_);
        t->value = {expires, interval, 0};
        Guard g(writer_);
        Timer*& head = buckets_[bucketOf(t->id)];
        t->next = head;
        rcu::assign(head, t);
        live_.fetch_add(1, std::memory_order_relaxed);
        return t->id;
    }

    bool remove(int id) override
    {
        Timer* t = nullptr;
        {
            Guard g(writer_);
            t = findIn(buckets_[bucketOf(id)], id);
            if (!t)
                return false;
            t->lock.lock();
            t->live = false;  // a lookup that already found it sees this after locking
            t->lock.unlock();
            unlink(buckets_[bucketOf(id)], t);
            live_.fetch_sub(1, std::memory_order_relaxed);
        }
        // Lookups may still hold a pointer to it: freed after a grace period.
        reclaimer_->retire(t);
        return true;
    }

protected:
    Timer* lockTimer(int id) override
    {
        rcu::ReadGuard rcu;
        Timer* t = findIn(buckets_[bucketOf(id)], id);
        if (!t)
            return nullptr;
        t->lock.lock();
        if (!t->live) {
            t->lock.unlock();
            return nullptr;
        }
        return t;
    }

private:
    Instrumented<SpinLock> writer_;
    std::unique_ptr<Reclaimer> reclaimer_ = std::make_unique<Reclaimer>();
};

} // namespace

std::unique_ptr<TimerTable> makeTimerTable(Variant variant, LockProfile* tableLock, LockProfile* timerLock)
{
    if (variant == Variant::Before)
        return std::make_unique<GlobalLockTable>(tableLock, timerLock);
    return std::make_unique<RcuTable>(tableLock, timerLock);
}

} // namespace lockscope::scaling
