// SPDX-License-Identifier: GPL-2.0-or-later
#include "lockscope/scaling/sem_array.h"

#include <condition_variable>
#include <mutex>
#include <vector>

#include "lockscope/scaling/locks.h"

namespace lockscope::scaling {

namespace {

// A sleeping task, like the kernel's struct sem_queue it lives on the
// sleeper's stack. The waker flips its state and signals while holding the
// sleeper's own mutex, so the sleeper cannot return (and free it) before the
// waker is done with it — the role of the old kernel's IN_WAKEUP status.
// List links and the semaphore number come first: they are what a pending
// list scan reads.
struct Sleeper {
    enum State { Pending, Granted, Removed };
    Sleeper* prev = nullptr;
    Sleeper* next = nullptr;
    int num = 0;
    State state = Pending;
    std::mutex m;
    std::condition_variable cv;

    void wake(State s)
    {
        std::lock_guard<std::mutex> g(m);
        state = s;
        cv.notify_one();
    }
    bool sleep()
    {
        std::unique_lock<std::mutex> g(m);
        cv.wait(g, [&] { return state != Pending; });
        return state == Granted;
    }
};

// FIFO of sleepers (intrusive, no allocation under the lock).
struct SleeperList {
    Sleeper* head = nullptr;
    Sleeper* tail = nullptr;
    size_t length = 0;

    void push(Sleeper* s)
    {
        s->prev = tail;
        s->next = nullptr;
        (tail ? tail->next : head) = s;
        tail = s;
        ++length;
    }
    void unlink(Sleeper* s)
    {
        (s->prev ? s->prev->next : head) = s->next;
        (s->next ? s->next->prev : tail) = s->prev;
        --length;
    }
};

struct SemState {
    long long value = 0;
    unsigned long long posted = 0, taken = 0;
};

// One lock and one pending list for the whole array, as before the change: a
// post re-tries every pending operation of the array (update_queue() over all
// sleepers, whatever semaphore they wait on), and the granted sleepers are
// woken right there, with the array lock still held, so a woken thread that
// wants to post next finds the lock taken by its waker.
class GlobalSemArray final : public SemArray {
public:
    GlobalSemArray(int n, LockProfile* p) : sems_(static_cast<size_t>(n)), lock_(p) {}

    int size() const override { return static_cast<int>(sems_.size()); }

    void post(int num, int n) override
    {
        Guard g(lock_);
        if (removed_)
            return;
        auto& sem = sems_[static_cast<size_t>(num)];
        sem.value += n;
        sem.posted += static_cast<unsigned long long>(n);
        updateQueue();
    }

    bool wait(int num) override
    {
        Sleeper self;
        self.num = num;
        {
            Guard g(lock_);
            if (removed_)
                return false;
            auto& sem = sems_[static_cast<size_t>(num)];
            if (sem.value > 0) {
                --sem.value;
                ++sem.taken;
                return true;
            }
            pending_.push(&self);
        }
        return self.sleep();
    }

    bool tryWait(int num) override
    {
        Guard g(lock_);
        auto& sem = sems_[static_cast<size_t>(num)];
        if (removed_ || sem.value <= 0)
            return false;
        --sem.value;
        ++sem.taken;
        return true;
    }

    void remove() override
    {
        Guard g(lock_);
        removed_ = true;
        while (Sleeper* s = pending_.head) {
            pending_.unlink(s);
            s->wake(Sleeper::Removed);
        }
    }

    Audit audit(int num) const override
    {
        Guard g(lock_);
        const auto& sem = sems_[static_cast<size_t>(num)];
        size_t sleepers = 0;
        for (Sleeper* s = pending_.head; s; s = s->next)
            sleepers += s->num == num;
        return {sem.value, sem.posted, sem.taken, sleepers};
    }

private:
    // Caller holds lock_.
    void updateQueue()
    {
        for (Sleeper* s = pending_.head; s;) {
            Sleeper* next = s->next;
            SemState& sem = sems_[static_cast<size_t>(s->num)];
            if (sem.value > 0) {
                --sem.value;
                ++sem.taken;
                pending_.unlink(s);
                s->wake(Sleeper::Granted);
            }
            s = next;
        }
    }

    std::vector<SemState> sems_;
    SleeperList pending_;
    bool removed_ = false;
    mutable Instrumented<SpinLock> lock_;
};

// After the change: each semaphore has its own lock and its own pending list,
// a post looks only at that semaphore's sleepers (and stops once its value is
// used up), and wakeups are collected and done after the lock is dropped
// (the kernel's wake_q).
class PerSemArray final : public SemArray {
public:
    PerSemArray(int n, LockProfile* p) : slots_(static_cast<size_t>(n))
    {
        for (auto& s : slots_)
            s = std::make_unique<Slot>(p);
    }

    int size() const override { return static_cast<int>(slots_.size()); }

    void post(int num, int n) override
    {
        // The granted sleepers are chained through their own (now unused)
        // list links, like the kernel's wake_q: nothing is allocated under
        // the lock. Read a sleeper's link before waking it: once woken it may
        // return and its node is gone.
        Sleeper* wakeHead = nullptr;
        Sleeper** wakeTail = &wakeHead;
        Slot& s = *slots_[static_cast<size_t>(num)];
        {
            Guard g(s.lock);
            if (s.removed)
                return;
            s.sem.value += n;
            s.sem.posted += static_cast<unsigned long long>(n);
            while (s.sem.value > 0 && s.pending.head) {
                Sleeper* w = s.pending.head;
                s.pending.unlink(w);
                --s.sem.value;
                ++s.sem.taken;
                w->next = nullptr;
                *wakeTail = w;
                wakeTail = &w->next;
            }
        }
        while (Sleeper* w = wakeHead) {
            wakeHead = w->next;
            w->wake(Sleeper::Granted);
        }
    }

    bool wait(int num) override
    {
        Sleeper self;
        self.num = num;
        Slot& s = *slots_[static_cast<size_t>(num)];
        {
            Guard g(s.lock);
            if (s.removed)
                return false;
            if (s.sem.value > 0) {
                --s.sem.value;
                ++s.sem.taken;
                return true;
            }
            s.pending.push(&self);
        }
        return self.sleep();
    }

    bool tryWait(int num) override
    {
        Slot& s = *slots_[static_cast<size_t>(num)];
        Guard g(s.lock);
        if (s.removed || s.sem.value <= 0)
            return false;
        --s.sem.value;
        ++s.sem.taken;
        return true;
    }

    void remove() override
    {
        // Whole-array operation: every semaphore lock, in index order.
        std::vector<Sleeper*> woken;
        for (auto& slot : slots_)
            slot->lock.lock();
        for (auto& slot : slots_) {
            slot->removed = true;
            while (Sleeper* w = slot->pending.head) {
                slot->pending.unlink(w);
                woken.push_back(w);
            }
        }
        for (auto it = slots_.rbegin(); it != slots_.rend(); ++it)
            (*it)->lock.unlock();
        for (Sleeper* w : woken)
            w->wake(Sleeper::Removed);
    }

    Audit audit(int num) const override
    {
        Slot& s = *slots_[static_cast<size_t>(num)];
        Guard g(s.lock);
        return {s.sem.value, s.sem.posted, s.sem.taken, s.pending.length};
    }

private:
    struct alignas(64) Slot {
        explicit Slot(LockProfile* p) : lock(p) {}
        Instrumented<SpinLock> lock;
        SemState sem;
        SleeperList pending;
        bool removed = false;
    };
    std::vector<std::unique_ptr<Slot>> slots_;
};

} // namespace

std::unique_ptr<SemArray> makeSemArray(Variant variant, int nsems, LockProfile* profile)
{
    if (variant == Variant::Before)
        return std::make_unique<GlobalSemArray>(nsems, profile);
    return std::make_unique<PerSemArray>(nsems, profile);
}

} // namespace lockscope::scaling
