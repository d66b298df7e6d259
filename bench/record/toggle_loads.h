// SPDX-License-Identifier: GPL-2.0-or-later
// The workloads bench_attach_toggle keeps running while it attaches and
// detaches probes: in-process versions of the three overhead.sh workloads
// (semop-multi --multi, timer-stress, sem-postwait), so one process's
// throughput can be read every second.
#pragma once

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdint>
#include <ctime>
#include <functional>
#include <memory>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include <csignal>

#include <fcntl.h>
#include <sys/sem.h>
#include <unistd.h>

#include "sysv_sem.h"

namespace lockscope::bench {

struct alignas(64) OpCount {
    std::atomic<uint64_t> n { 0 };
};

// Threads calling step(index, stop) until stopped; step returns the ops it
// did, or -1 on a failure (which ends that thread).
class Workers {
public:
    using Step = std::function<int(unsigned index, const std::atomic<bool>& stop)>;

    Workers(unsigned threads, Step step)
        : step_(std::move(step))
        , counts_(threads)
    {
        for (unsigned i = 0; i < threads; ++i)
            threads_.emplace_back([this, i] { run(i); });
    }
    ~Workers()
    {
        stop_.store(true);
        for (auto& t : threads_)
            t.join();
    }
    Workers(const Workers&) = delete;
    Workers& operator=(const Workers&) = delete;

    uint64_t ops() const
    {
        uint64_t s = 0;
        for (const auto& c : counts_)
            s += c.n.load(std::memory_order_relaxed);
        return s;
    }
    bool failed() const { return failed_.load(); }

private:
    void run(unsigned index)
    {
        while (!stop_.load(std::memory_order_relaxed)) {
            const int n = step_(index, stop_);
            if (n < 0) {
                failed_.store(true);
                return;
            }
            counts_[index].n.fetch_add(static_cast<uint64_t>(n), std::memory_order_relaxed);
        }
    }

    Step step_;
    std::vector<OpCount> counts_;
    std::atomic<bool> stop_ { false };
    std::atomic<bool> failed_ { false };
    std::vector<std::thread> threads_; // last: joined before the rest goes
};

// A running workload: its ops so far, and whether a call failed. Each load
// starts workers_ last and stops it first in its destructor, before the
// state its threads use goes.
class Load {
public:
    virtual ~Load() = default;
    uint64_t ops() const { return workers_->ops(); }
    bool failed() const { return workers_->failed(); }
    virtual std::string describe() const = 0;

protected:
    std::unique_ptr<Workers> workers_;
};

// semop-multi --multi: up on two neighbouring semaphores of one 16-semaphore
// set, then down. Never blocks, and nsops > 1 takes the whole array's
// spinlock on every call.
class SemopLoad final : public Load {
public:
    explicit SemopLoad(unsigned threads)
        : threads_(threads)
        , set_("bench_attach_toggle", kSems)
        , rng_(threads)
    {
        set_.setAll(0);
        for (unsigned i = 0; i < threads; ++i)
            rng_[i] = 0x9E3779B97F4A7C15ULL * (i + 1);
        workers_ = std::make_unique<Workers>(
            threads, [this](unsigned i, const std::atomic<bool>&) { return step(i); });
    }
    ~SemopLoad() override { workers_.reset(); }
    std::string describe() const override
    {
        return "semop (2 sops) on one 16-semaphore set, " + std::to_string(threads_) + " threads";
    }

private:
    static constexpr int kSems = 16;
    int step(unsigned i)
    {
        uint64_t& rng = rng_[i];
        rng ^= rng << 13;
        rng ^= rng >> 7;
        rng ^= rng << 17;
        const auto first = static_cast<int>(rng % kSems);
        sembuf up[2], down[2];
        for (int k = 0; k < 2; ++k) {
            const auto num = static_cast<unsigned short>((first + k) % kSems);
            up[k] = { num, 1, 0 };
            down[k] = { num, -1, 0 };
        }
        if (semop(set_.id(), up, 2) < 0 || semop(set_.id(), down, 2) < 0)
            return -1;
        return 2;
    }

    unsigned threads_;
    workload::SemSet set_;
    std::vector<uint64_t> rng_;
};

// timer-stress: each thread calls timer_gettime() round-robin over its own
// 16 POSIX timers.
class TimerLoad final : public Load {
public:
    explicit TimerLoad(unsigned threads)
        : threads_(threads)
        , timers_(threads)
        , next_(threads)
    {
        sigevent ev {};
        ev.sigev_notify = SIGEV_NONE;
        for (auto& mine : timers_)
            for (int k = 0; k < kTimers; ++k) {
                timer_t t {};
                if (timer_create(CLOCK_MONOTONIC, &ev, &t) < 0) {
                    deleteTimers();
                    throw std::runtime_error("timer_create failed");
                }
                mine.push_back(t);
            }
        workers_ = std::make_unique<Workers>(
            threads, [this](unsigned i, const std::atomic<bool>&) { return step(i); });
    }
    ~TimerLoad() override
    {
        workers_.reset();
        deleteTimers();
    }
    std::string describe() const override
    {
        return "timer_gettime() over 16 POSIX timers per thread, " + std::to_string(threads_) + " threads";
    }

private:
    static constexpr int kTimers = 16;
    int step(unsigned i)
    {
        itimerspec cur {};
        if (timer_gettime(timers_[i][next_[i]++ % kTimers], &cur) < 0)
            return -1;
        return 1;
    }
    void deleteTimers()
    {
        for (auto& mine : timers_)
            for (timer_t t : mine)
                timer_delete(t);
        timers_.clear();
    }

    unsigned threads_;
    std::vector<std::vector<timer_t>> timers_;
    std::vector<unsigned> next_;
};

// sem-postwait: pairs of threads ping-pong through two semaphores of one
// set; every cycle blocks one thread and wakes it from the other. Waits time
// out every 50 ms so a stop never leaves a thread asleep.
class PostWaitLoad final : public Load {
public:
    explicit PostWaitLoad(unsigned threads)
        : pairs_(std::max(1U, threads / 2))
        , set_("bench_attach_toggle", static_cast<int>(2 * pairs_))
    {
        set_.setAll(0);
        workers_ = std::make_unique<Workers>(
            2 * pairs_, [this](unsigned i, const std::atomic<bool>& stop) { return step(i, stop); });
    }
    ~PostWaitLoad() override { workers_.reset(); }
    std::string describe() const override
    {
        return "semaphore ping-pong, " + std::to_string(pairs_) + " pairs of threads";
    }

private:
    // Thread 2p posts semaphore 2p+1 and waits on 2p; thread 2p+1 waits on
    // 2p+1 and posts 2p. One op per completed wait.
    int step(unsigned i, const std::atomic<bool>& stop)
    {
        const auto pair = static_cast<unsigned short>(i / 2 * 2);
        const bool first = i % 2 == 0;
        const auto mine = static_cast<unsigned short>(first ? pair : pair + 1);
        const auto theirs = static_cast<unsigned short>(first ? pair + 1 : pair);
        if (first && !post(theirs))
            return -1;
        if (!wait(mine, stop))
            return stop.load() ? 0 : -1;
        if (!first && !post(theirs))
            return -1;
        return 1;
    }
    bool post(unsigned short num)
    {
        sembuf op { num, 1, 0 };
        return semop(set_.id(), &op, 1) == 0;
    }
    bool wait(unsigned short num, const std::atomic<bool>& stop)
    {
        sembuf op { num, -1, 0 };
        const timespec timeout { 0, 50'000'000 };
        while (!stop.load(std::memory_order_relaxed)) {
            if (semtimedop(set_.id(), &op, 1, &timeout) == 0)
                return true;
            if (errno != EAGAIN && errno != EINTR)
                return false;
        }
        return false;
    }

    unsigned pairs_;
    workload::SemSet set_;
};

// Threads read() a byte at a time from one shared file descriptor: every
// read takes the file's f_pos_lock, a mutex the contention tracepoints report
// (optimistic spinning, then sleeping) at a few 10^5 waits a second even on
// a kernel that reports no spinning-lock waits.
class FilePosLoad final : public Load {
public:
    explicit FilePosLoad(unsigned threads)
        : threads_(threads)
        , fd_(open("/proc/self/exe", O_RDONLY | O_CLOEXEC))
    {
        if (fd_ < 0)
            throw std::runtime_error("open /proc/self/exe failed");
        workers_ = std::make_unique<Workers>(
            threads, [this](unsigned, const std::atomic<bool>&) { return step(); });
    }
    ~FilePosLoad() override
    {
        workers_.reset();
        close(fd_);
    }
    std::string describe() const override
    {
        return "read() of one shared file descriptor (f_pos_lock), " + std::to_string(threads_) + " threads";
    }

private:
    int step()
    {
        char c = 0;
        const ssize_t n = read(fd_, &c, 1);
        if (n == 0)
            return lseek(fd_, 0, SEEK_SET) < 0 ? -1 : 0;
        return n < 0 ? -1 : 1;
    }

    unsigned threads_;
    int fd_;
};

// The load named by --load, or nullptr for a name that is none of them.
inline std::unique_ptr<Load> makeLoad(const std::string& name, unsigned threads)
{
    if (name == "semop")
        return std::make_unique<SemopLoad>(threads);
    if (name == "timer")
        return std::make_unique<TimerLoad>(threads);
    if (name == "postwait")
        return std::make_unique<PostWaitLoad>(threads);
    if (name == "filepos")
        return std::make_unique<FilePosLoad>(threads);
    return nullptr;
}

} // namespace lockscope::bench
