// SPDX-License-Identifier: GPL-2.0-or-later
#include "lockscope/scaling/sem_array.h"

#include <condition_variable>
#include <mutex>
#include <vector>

#include "lockscope/scaling/locks.h"

namespace lockscope::scaling {

namespace {

// A sleeping task. It lives on the sleeper's stack; the waker flips its state
// and signals while holding the sleeper's own mutex, so the sleeper cannot
// return (and free it) before the waker is done with it.
struct Sleeper {
    enum State { Pending, Granted, Removed };
    int num = 0;
    State state = Pending;
    std::mutex m;
    std::condition_variable cv;
    Sleeper* prev = nullptr;
    Sleeper* next = nullptr;

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

// Grants what the current values allow, in FIFO order, collecting the sleepers
// to wake after the lock is dropped (the kernel's wake_q).
void grant(SleeperList& list, std::vector<SemState>& sems, std::vector<Sleeper*>& woken)
{
    for (Sleeper* s = list.head; s;) {
        Sleeper* next = s->next;
        SemState& sem = sems[static_cast<size_t>(s->num)];
        if (sem.value > 0) {
            --sem.value;
            ++sem.taken;
            list.unlink(s);
            woken.push_back(s);
        }
        s = next;
    }
}

class GlobalSemArray final : public SemArray {
public:
    GlobalSemArray(int n, LockProfile* p) : sems_(static_cast<size_t>(n)), lock_(p) {}

    int size() const override { return static_cast<int>(sems_.size()); }

    void post(int num, int n) override
    {
        std::vector<Sleeper*> woken;
        {
            Guard g(lock_);
            if (removed_)
                return;
            auto& sem = sems_[static_cast<size_t>(num)];
            sem.value += n;
            sem.posted += static_cast<unsigned long long>(n);
            grant(pending_, sems_, woken);
        }
        for (Sleeper* s : woken)
            s->wake(Sleeper::Granted);
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
        std::vector<Sleeper*> woken;
        {
            Guard g(lock_);
            removed_ = true;
            while (Sleeper* s = pending_.head) {
                pending_.unlink(s);
                woken.push_back(s);
            }
        }
        for (Sleeper* s : woken)
            s->wake(Sleeper::Removed);
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
    std::vector<SemState> sems_;
    SleeperList pending_;
    bool removed_ = false;
    mutable Instrumented<SpinLock> lock_;
};

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
        std::vector<Sleeper*> woken;
        Slot& s = *slots_[static_cast<size_t>(num)];
        {
            Guard g(s.lock);
            if (s.removed)
                return;
            s.sem[0].value += n;
            s.sem[0].posted += static_cast<unsigned long long>(n);
            grant(s.pending, s.sem, woken);
        }
        for (Sleeper* w : woken)
            w->wake(Sleeper::Granted);
    }

    bool wait(int num) override
    {
        Sleeper self;
        self.num = 0;  // index into the slot's own one-element state
        Slot& s = *slots_[static_cast<size_t>(num)];
        {
            Guard g(s.lock);
            if (s.removed)
                return false;
            if (s.sem[0].value > 0) {
                --s.sem[0].value;
                ++s.sem[0].taken;
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
        if (s.removed || s.sem[0].value <= 0)
            return false;
        --s.sem[0].value;
        ++s.sem[0].taken;
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
        return {s.sem[0].value, s.sem[0].posted, s.sem[0].taken, s.pending.length};
    }

private:
    struct alignas(64) Slot {
        explicit Slot(LockProfile* p) : lock(p) {}
        Instrumented<SpinLock> lock;
        std::vector<SemState> sem{1};
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
