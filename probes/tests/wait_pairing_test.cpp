// SPDX-License-Identifier: GPL-2.0-or-later
// The begin/end pairing of wait.bpf.c, exercised on the real (unattached)
// raw_tp programs with BPF_PROG_TEST_RUN and synthetic event sequences.
#include <algorithm>
#include <map>
#include <memory>
#include <tuple>
#include <vector>

#include <sched.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <gtest/gtest.h>

#include "lockscope/capture/histogram.h"
#include "lockscope_bpf.h"
#include "test_support.h"
#include "wait_hist.h"
#include "wait.skel.h"

namespace {

constexpr uint64_t A = 0xffff888000001000ULL;
constexpr uint64_t B = 0xffff888000002000ULL;
constexpr uint64_t M = 0xffff888000003000ULL;
constexpr uint64_t X = 0xffff888000004000ULL;

class Pairing : public ::testing::Test {
protected:
    void SetUp() override
    {
        LOCKSCOPE_REQUIRE_ROOT();
        // A run on CPU 0 from another CPU executes in an IPI there, where the
        // current task (the key of the per-task pending stack for sleeping
        // locks) is whatever CPU 0 was running: the test thread must be it.
        ASSERT_EQ(sched_getaffinity(0, sizeof saved_, &saved_), 0);
        cpu_set_t zero;
        CPU_ZERO(&zero);
        CPU_SET(0, &zero);
        ASSERT_EQ(sched_setaffinity(0, sizeof zero, &zero), 0);
        skel_.reset(ls_wait__open());
        ASSERT_TRUE(skel_);
        auto& p = skel_->progs;
        for (bpf_program* prog : { p.wait_begin_btf, p.wait_end_btf, p.wait_begin_tp, p.wait_end_tp })
            bpf_program__set_autoload(prog, false);
        configure(*skel_);
        ASSERT_EQ(ls_wait__load(skel_.get()), 0);
    }

    void TearDown() override { sched_setaffinity(0, sizeof saved_, &saved_); }

    virtual void configure(ls_wait&) { }

    // Runs on CPU 0 so the per-CPU pending stack is one stack.
    void run(bpf_program* prog, uint64_t a0, uint64_t a1)
    {
        uint64_t args[2] = { a0, a1 };
        LIBBPF_OPTS(bpf_test_run_opts, opts, .ctx_in = args, .ctx_size_in = sizeof args,
            .flags = BPF_F_TEST_RUN_ON_CPU, .cpu = 0);
        ASSERT_EQ(bpf_prog_test_run_opts(bpf_program__fd(prog), &opts), 0) << "BPF_PROG_TEST_RUN failed";
    }
    void begin(uint64_t lock, uint32_t flags) { run(skel_->progs.wait_begin_raw, lock, flags); }
    void end(uint64_t lock, int ret)
    {
        run(skel_->progs.wait_end_raw, lock, static_cast<uint64_t>(static_cast<int64_t>(ret)));
    }

    // (lock, flags) -> histogram, with the ended waits not yet added
    // (undrained) unless asked for the histogram map alone.
    std::map<std::pair<uint64_t, uint32_t>, lockscope::Log2Hist> waits(bool with_undrained = true) const
    {
        std::map<std::pair<uint64_t, uint32_t>, lockscope::Log2Hist> out;
        const int fd = bpf_map__fd(skel_->maps.waits);
        ls_wait_key key {}, next {};
        const void* prev = nullptr;
        while (bpf_map_get_next_key(fd, prev, &next) == 0) {
            key = next;
            prev = &key;
            // Per CPU: each CPU's copy is a histogram of its own (or empty).
            std::vector<ls_hist> cpus(static_cast<size_t>(libbpf_num_possible_cpus()));
            if (bpf_map_lookup_elem(fd, &key, cpus.data()) != 0)
                continue;
            for (const ls_hist& h : cpus) {
                if (h.count == 0)
                    continue;
                std::array<uint64_t, 64> b {};
                std::copy(std::begin(h.slots), std::end(h.slots), b.begin());
                out[{ key.lock, key.flags }].merge(
                    lockscope::Log2Hist::fromParts(b, h.count, h.total, h.min, h.max));
            }
        }
        if (with_undrained)
            for (const ls_wait_done& d : undrained())
                out[{ d.lock, d.flags }].add(d.delta);
        return out;
    }

    // Ended waits the next begin on their CPU would add to waits.
    std::vector<ls_wait_done> undrained() const
    {
        return lockscope::probes::detail::undrainedWaits(bpf_map__fd(skel_->maps.done));
    }
    // Untimed waits counted at their begin, not yet in waits.
    std::vector<ls_wait_count> pending() const
    {
        return lockscope::probes::detail::pendingCounts(bpf_map__fd(skel_->maps.wait_counts));
    }
    uint64_t waitEvents() const
    {
        uint64_t n = counter(LS_C_WAIT_EVENTS) + undrained().size();
        for (const ls_wait_count& c : pending())
            n += c.count;
        return n;
    }

    uint64_t counter(ls_counter c) const
    {
        const int n = libbpf_num_possible_cpus();
        std::vector<uint64_t> v(static_cast<size_t>(n));
        uint32_t key = c;
        if (bpf_map_lookup_elem(bpf_map__fd(skel_->maps.counters), &key, v.data()) != 0)
            return UINT64_MAX;
        uint64_t s = 0;
        for (uint64_t x : v)
            s += x;
        return s;
    }

    uint32_t cpuDepth() const
    {
        const int n = libbpf_num_possible_cpus();
        std::vector<ls_wait_stack> v(static_cast<size_t>(n));
        uint32_t key = 0;
        if (bpf_map_lookup_elem(bpf_map__fd(skel_->maps.cpu_pending), &key, v.data()) != 0)
            return UINT32_MAX;
        return v[0].depth;
    }

    // A wait pending in this task's slot (task storage is looked up by
    // pidfd; gtest runs the tests on the main thread, whose pidfd this is).
    bool taskPending() const
    {
        const int pidfd = gettid() == getpid() ? static_cast<int>(syscall(SYS_pidfd_open, getpid(), 0)) : -1;
        if (pidfd < 0)
            return true; // cannot tell: fail the EXPECT_FALSE callers
        ls_wait_stack s {};
        const bool found = bpf_map_lookup_elem(bpf_map__fd(skel_->maps.task_pending), &pidfd, &s) == 0;
        close(pidfd);
        return found && s.depth > 0;
    }

    struct Destroy {
        void operator()(ls_wait* s) const { ls_wait__destroy(s); }
    };
    std::unique_ptr<ls_wait, Destroy> skel_;
    cpu_set_t saved_ {};
};

TEST_F(Pairing, NestedSpinWaitsOnOneCpuKeepBothWaits)
{
    begin(A, LS_LCB_F_SPIN);
    begin(B, LS_LCB_F_SPIN); // an irq contending while A is being waited for
    end(B, 0);
    end(A, 0);
    auto w = waits();
    ASSERT_EQ(w.size(), 2u);
    const auto& a = w[{ A, LS_LCB_F_SPIN }];
    const auto& b = w[{ B, LS_LCB_F_SPIN }];
    ASSERT_EQ(a.count(), 1u);
    ASSERT_EQ(b.count(), 1u);
    EXPECT_TRUE(a.consistent());
    EXPECT_GT(a.total(), b.total()) << "the outer wait spans the inner one";
    EXPECT_EQ(waitEvents(), 2u);
    EXPECT_EQ(counter(LS_C_UNMATCHED), 0u);
    EXPECT_EQ(counter(LS_C_STALE), 0u);
    EXPECT_EQ(cpuDepth(), 0u);
}

// contention_end only parks the ended wait in the CPU's ring; the next
// contention_begin there (off the critical section) adds it to its histogram.
TEST_F(Pairing, AnEndedWaitIsAddedByTheNextBeginOnItsCpu)
{
    begin(A, LS_LCB_F_SPIN);
    end(A, 0);
    EXPECT_TRUE(waits(false).empty()) << "the end itself updates no histogram";
    auto u = undrained();
    ASSERT_EQ(u.size(), 1u);
    EXPECT_EQ(u[0].lock, A);
    EXPECT_EQ(u[0].flags, LS_LCB_F_SPIN);
    EXPECT_EQ(counter(LS_C_WAIT_EVENTS), 0u);

    begin(B, LS_LCB_F_SPIN);
    auto w = waits(false);
    ASSERT_EQ(w.size(), 1u);
    EXPECT_EQ((w[{ A, LS_LCB_F_SPIN }].count()), 1u);
    EXPECT_EQ((w[{ A, LS_LCB_F_SPIN }].total()), u[0].delta);
    EXPECT_TRUE(undrained().empty());
    EXPECT_EQ(counter(LS_C_WAIT_EVENTS), 1u);

    end(B, 0);
    ASSERT_EQ(undrained().size(), 1u);
    EXPECT_EQ(undrained()[0].lock, B);
    EXPECT_EQ(waitEvents(), 2u);
}

// A slot reserved by an end that an irq interrupted before it marked the
// slot ready is neither filed by the irq's begin nor read by userspace: the
// interrupted end finishes it. Simulated by clearing ready after the fact.
TEST_F(Pairing, AReservedSlotNotYetReadyIsLeftForItsEnd)
{
    begin(A, LS_LCB_F_SPIN);
    end(A, 0);
    const int fd = bpf_map__fd(skel_->maps.done);
    std::vector<ls_wait_done_ring> rings(static_cast<size_t>(libbpf_num_possible_cpus()));
    const uint32_t key = 0;
    ASSERT_EQ(bpf_map_lookup_elem(fd, &key, rings.data()), 0);
    ASSERT_EQ(rings[0].head - rings[0].tail, 1u);
    ASSERT_EQ(rings[0].e[rings[0].tail & (LS_WAIT_DONE - 1)].ready, 1u);
    rings[0].e[rings[0].tail & (LS_WAIT_DONE - 1)].ready = 0;
    ASSERT_EQ(bpf_map_update_elem(fd, &key, rings.data(), BPF_ANY), 0);
    EXPECT_TRUE(undrained().empty());

    begin(B, LS_LCB_F_SPIN);
    EXPECT_TRUE(waits(false).empty()) << "the drain must stop at a slot still being filled";
    EXPECT_EQ(counter(LS_C_WAIT_EVENTS), 0u);
    ASSERT_EQ(bpf_map_lookup_elem(fd, &key, rings.data()), 0);
    EXPECT_EQ(rings[0].head - rings[0].tail, 1u) << "left reserved for the end that owns it";
}

// More ends than the ring holds between two begins on a CPU (here: four
// nested spin waits and the task's mutex wait end in a row): the ring keeps
// the first LS_WAIT_DONE in order and the next end updates its histogram
// itself, so nothing is lost.
TEST_F(Pairing, AFullRingOfEndedWaitsFallsBackToAddingAtTheEnd)
{
    static_assert(LS_WAIT_DONE == LS_NEST, "the test fills the ring from a full per-CPU stack");
    const uint64_t locks[LS_NEST] = { A, B, X, X + 0x1000 };
    begin(M, LS_LCB_F_MUTEX);
    for (uint64_t l : locks)
        begin(l, LS_LCB_F_SPIN);
    for (int i = LS_NEST - 1; i >= 0; --i)
        end(locks[i], 0);
    end(M, 0);
    auto u = undrained();
    ASSERT_EQ(u.size(), size_t { LS_WAIT_DONE });
    for (size_t i = 0; i < u.size(); ++i)
        EXPECT_EQ(u[i].lock, locks[LS_NEST - 1 - i]) << "oldest first, slot " << i;
    auto w = waits(false);
    ASSERT_EQ(w.size(), 1u) << "only the end that found the ring full updated a histogram";
    EXPECT_EQ((w[{ M, LS_LCB_F_MUTEX }].count()), 1u);
    EXPECT_EQ(counter(LS_C_WAIT_EVENTS), 1u);
    EXPECT_EQ(waitEvents(), uint64_t { LS_NEST + 1 });
    EXPECT_EQ(counter(LS_C_UNMATCHED) + counter(LS_C_STALE) + counter(LS_C_NEST_OVERFLOW), 0u);
}

TEST_F(Pairing, MutexSpinThenSleepIsOneWaitAndItsWaitLockIsSeparate)
{
    begin(M, LS_LCB_F_MUTEX | LS_LCB_F_SPIN); // optimistic spin
    begin(A, LS_LCB_F_SPIN); // the mutex's wait_lock, contended
    end(A, 0);
    begin(M, LS_LCB_F_MUTEX); // gives up spinning, sleeps
    end(M, 0);
    auto w = waits();
    ASSERT_EQ(w.size(), 2u);
    EXPECT_EQ((w[{ M, LS_LCB_F_MUTEX }].count()), 1u) << "one wait, a mutex (not mutex:spin) wait once it slept";
    EXPECT_EQ((w[{ A, LS_LCB_F_SPIN }].count()), 1u);
    EXPECT_FALSE(taskPending()) << "no wait is left pending on the task when its last wait ends";
    EXPECT_EQ(cpuDepth(), 0u);
}

// A mutex wait that got the lock while spinning keeps LCB_F_SPIN: mutex:spin.
TEST_F(Pairing, MutexWaitThatNeverSleptStaysSpin)
{
    begin(M, LS_LCB_F_MUTEX | LS_LCB_F_SPIN);
    end(M, 0);
    auto w = waits();
    ASSERT_EQ(w.size(), 1u);
    EXPECT_EQ((w[{ M, LS_LCB_F_MUTEX | LS_LCB_F_SPIN }].count()), 1u);
}

TEST_F(Pairing, SleepingWaitInterruptedBySpinWaitOnTheSameLockAddressSpace)
{
    begin(M, LS_LCB_F_WRITE); // rwsem, per task
    begin(A, LS_LCB_F_SPIN); // per CPU
    end(M, 0); // ends the task's wait; A still pending on the CPU
    EXPECT_EQ(cpuDepth(), 1u);
    end(A, 0);
    auto w = waits();
    EXPECT_EQ((w[{ M, LS_LCB_F_WRITE }].count()), 1u);
    EXPECT_EQ((w[{ A, LS_LCB_F_SPIN }].count()), 1u);
    EXPECT_EQ(counter(LS_C_UNMATCHED), 0u);
}

TEST_F(Pairing, AbortedWaitsAreCountedApart)
{
    begin(M, LS_LCB_F_WRITE);
    EXPECT_TRUE(taskPending());
    end(M, -4); // -EINTR: killed while waiting
    EXPECT_TRUE(waits().empty());
    EXPECT_EQ(counter(LS_C_ABORTED), 1u);
    EXPECT_EQ(waitEvents(), 0u);
    EXPECT_FALSE(taskPending());
}

TEST_F(Pairing, EndWithoutBeginIsUnmatched)
{
    begin(M, LS_LCB_F_MUTEX);
    end(X, 0);
    EXPECT_EQ(counter(LS_C_UNMATCHED), 1u);
    end(M, 0);
    EXPECT_EQ((waits()[{ M, LS_LCB_F_MUTEX }].count()), 1u);
}

TEST_F(Pairing, MissedEndDropsTheStaleInnerWait)
{
    begin(A, LS_LCB_F_SPIN);
    begin(B, LS_LCB_F_SPIN); // its end is lost
    end(A, 0);
    EXPECT_EQ(counter(LS_C_STALE), 1u);
    EXPECT_EQ(cpuDepth(), 0u);
    auto w = waits();
    ASSERT_EQ(w.size(), 1u);
    EXPECT_EQ((w[{ A, LS_LCB_F_SPIN }].count()), 1u);
}

// A spin wait another task began on this CPU and never ended (it began just
// before the end program attached) is not the wait of the next task to end
// that lock here: the rq lock of a CPU is exactly such a lock, and its stale
// entry used to be filed under the process of whichever task ended it next.
TEST_F(Pairing, SpinWaitBegunByAnotherTaskIsStaleNotOurs)
{
    std::thread other([this] {
        cpu_set_t zero;
        CPU_ZERO(&zero);
        CPU_SET(0, &zero);
        ASSERT_EQ(sched_setaffinity(0, sizeof zero, &zero), 0);
        begin(A, LS_LCB_F_SPIN);
    });
    other.join();
    EXPECT_EQ(cpuDepth(), 1u);
    end(A, 0);
    EXPECT_TRUE(waits().empty());
    EXPECT_EQ(counter(LS_C_STALE), 1u);
    EXPECT_EQ(waitEvents(), 0u);
    EXPECT_EQ(cpuDepth(), 0u);
    begin(A, LS_LCB_F_SPIN);
    end(A, 0);
    EXPECT_EQ((waits()[{ A, LS_LCB_F_SPIN }].count()), 1u);
}

// The agent attaches the programs part of the time (wait_duty.h) and moves
// attach_epoch on before each attachment: a begin of the last attachment
// whose end came while detached pairs with no end of this one, per CPU or
// per task, and its loss is the sampling's, not counted as stale.
TEST_F(Pairing, ABeginOfAnEarlierAttachmentPairsWithNoLaterEnd)
{
    begin(A, LS_LCB_F_SPIN);
    begin(M, LS_LCB_F_MUTEX);
    skel_->bss->attach_epoch = skel_->bss->attach_epoch + 1;
    end(A, 0); // its begin came while detached
    end(M, 0);
    EXPECT_TRUE(waits().empty());
    EXPECT_EQ(waitEvents(), 0u);
    EXPECT_EQ(counter(LS_C_STALE), 0u);
    EXPECT_EQ(counter(LS_C_UNMATCHED), 0u);
    EXPECT_EQ(cpuDepth(), 0u);
    EXPECT_FALSE(taskPending());
    begin(A, LS_LCB_F_SPIN);
    end(A, 0);
    begin(M, LS_LCB_F_MUTEX);
    end(M, 0);
    auto w = waits();
    EXPECT_EQ((w[{ A, LS_LCB_F_SPIN }].count()), 1u);
    EXPECT_EQ((w[{ M, LS_LCB_F_MUTEX }].count()), 1u);
}

TEST_F(Pairing, NestingDeeperThanTheStackIsCountedNotCorrupted)
{
    const uint64_t locks[LS_NEST + 1] = { A, B, M, X, X + 0x100 };
    for (uint64_t l : locks)
        begin(l, LS_LCB_F_SPIN);
    EXPECT_EQ(counter(LS_C_NEST_OVERFLOW), 1u);
    for (int i = LS_NEST - 1; i >= 0; --i)
        end(locks[i], 0);
    EXPECT_EQ(waitEvents(), uint64_t { LS_NEST });
    EXPECT_EQ(cpuDepth(), 0u);
}

// lockscope agent's drains (drainWaits): each takes what was filed since the
// one before, no wait lost or taken twice, and leaves a busy key in the map
// emptied, for the next window's waits to find: deleted, the keys of a busy
// machine were created again in a burst the map's per-CPU element cache
// refused (-ENOMEM, counted as map_busy). A key with nothing in a whole
// generation is deleted.
TEST_F(Pairing, DrainsTakeEveryWaitOnceAndKeepTheBusyKeys)
{
    namespace d = lockscope::probes::detail;
    const int fd = bpf_map__fd(skel_->maps.waits);
    auto keysInMap = [&] {
        std::map<std::pair<uint64_t, uint32_t>, bool> keys; // -> emptied
        std::vector<ls_hist> cpus(static_cast<size_t>(libbpf_num_possible_cpus()));
        ls_wait_key key {}, next {};
        const void* prev = nullptr;
        while (bpf_map_get_next_key(fd, prev, &next) == 0) {
            key = next;
            prev = &key;
            EXPECT_EQ(bpf_map_lookup_elem(fd, &key, cpus.data()), 0);
            keys[{ key.lock, key.flags }] = std::all_of(
                cpus.begin(), cpus.end(), [](const ls_hist& h) { return h.count == 0 && h.min == ~0ULL; });
        }
        return keys;
    };
    uint64_t waited = 0, drained = 0;
    // The last end of a window waits in the ring for the next begin, which
    // files it into the next generation: B's wait comes first.
    auto window = [&](bool withB) {
        if (withB) {
            begin(B, LS_LCB_F_SPIN);
            end(B, 0);
            ++waited;
        }
        for (int i = 0; i < 50; ++i, ++waited) {
            begin(A, LS_LCB_F_SPIN);
            end(A, 0);
        }
        for (const d::RawWait& w : d::drainWaits(fd, d::closeWaitGeneration(&skel_->bss->wait_gen))) {
            EXPECT_EQ(w.record.flags, LS_LCB_F_SPIN) << "the generation bit is the map's, not the record's";
            drained += w.hist.count;
        }
    };
    const uint32_t gen = LS_LCB_F_SPIN | LS_WAIT_F_GEN;
    window(true); // generation 0: A and B
    EXPECT_EQ(keysInMap(), (std::map<std::pair<uint64_t, uint32_t>, bool> {
                               { { A, LS_LCB_F_SPIN }, true }, { { B, LS_LCB_F_SPIN }, true } }));
    window(false); // generation 1: A
    EXPECT_EQ(keysInMap().size(), 3u);
    EXPECT_TRUE((keysInMap()[{ A, gen }]));
    window(false); // generation 0 again: A finds its key; B had nothing and goes
    EXPECT_EQ(keysInMap(), (std::map<std::pair<uint64_t, uint32_t>, bool> {
                               { { A, LS_LCB_F_SPIN }, true }, { { A, gen }, true } }));
    window(false);
    EXPECT_EQ(drained + undrained().size(), waited);
    EXPECT_EQ(waitEvents(), waited);
    EXPECT_EQ(counter(LS_C_MAP_NOMEM) + counter(LS_C_MAP_FULL) + counter(LS_C_MAP_BUSY), 0u);
}

TEST_F(Pairing, BucketsMatchLog2Hist)
{
    // Many waits: each histogram slot index must equal Log2Hist::bucketOf of its values,
    // which consistent() checks through min/max.
    for (int i = 0; i < 50; ++i) {
        begin(A, LS_LCB_F_SPIN);
        end(A, 0);
    }
    auto w = waits();
    const auto& a = w[{ A, LS_LCB_F_SPIN }];
    EXPECT_EQ(a.count(), 50u);
    EXPECT_TRUE(a.consistent()) << "min " << a.min() << " max " << a.max();
}

} // namespace

// The budgets' windows on the program's test clock, which the tests step:
// no real-time window, so a preempted test sees the same windows.
class ClockedPairing : public Pairing {
protected:
    void configure(ls_wait& w) override { w.rodata->test_clock = true; }
    // Sets the program's clock to ms after an arbitrary start.
    void at(uint64_t ms) { skel_->bss->test_now_ns = kStart + ms * 1000000ULL; }
    void later(uint64_t ns) { skel_->bss->test_now_ns += ns; }

    static constexpr uint64_t kStart = 1000000000000ULL;
};

// The stack budget (record --stack-budget): 3 walks per 10 ms window per CPU.
class StackBudget : public ClockedPairing {
protected:
    void configure(ls_wait& w) override
    {
        ClockedPairing::configure(w);
        w.rodata->stack_window_walks = 3;
    }

    // n spin waits on lock; returns how many of them had their stack walked.
    uint64_t waitsWalked(unsigned n, uint64_t lock = A)
    {
        const uint64_t before = counter(LS_C_STACK_UNSAMPLED);
        for (unsigned i = 0; i < n; ++i) {
            begin(lock, LS_LCB_F_SPIN);
            end(lock, 0);
        }
        done_ += n;
        return n - (counter(LS_C_STACK_UNSAMPLED) - before);
    }

    uint64_t done_ = 0;
};

TEST_F(StackBudget, WalksAtMostTheBudgetPerWindowAndSpreadsThemOnceExceeded)
{
    // A window with one wait, so the next one opens walking every wait.
    at(0);
    waitsWalked(1);
    at(12);
    const uint64_t first = waitsWalked(3);
    const uint64_t rest = waitsWalked(17);
    at(24);
    // 20 waits last window: each later wait is walked with probability
    // 1 / ceil(20 / 3) = 1/7, after the first wait on each lock in the window.
    const uint64_t firstOfA = waitsWalked(1);
    const uint64_t firstOfB = waitsWalked(1, B); // a rare lock next to a hot one
    const uint64_t firstOfX = waitsWalked(1, X); // the third walk: the budget is spent
    const uint64_t capped = waitsWalked(1, M) + waitsWalked(20); // even a new lock's
    EXPECT_EQ(first, 3u) << "a window after a quiet one walks every wait up to the budget";
    EXPECT_EQ(rest, 0u) << "the budget of 3 per window was exceeded";
    EXPECT_EQ(firstOfA, 1u) << "the first wait on a lock in a window is walked";
    EXPECT_EQ(firstOfB, 1u) << "a rare lock's first wait is walked despite the period";
    EXPECT_EQ(firstOfX, 1u);
    EXPECT_EQ(capped, 0u) << "no walk past the budget, even a new lock's";
    at(36);
    EXPECT_EQ(waitsWalked(1), 1u) << "a new window walks again";
    uint64_t timed = 0;
    for (const auto& [k, h] : waits())
        timed += h.count();
    EXPECT_EQ(timed, done_) << "every wait is counted and timed, walked or not";
    EXPECT_EQ(waitEvents(), done_);
}

// After a busy window the walks are drawn at random (a counter would walk the
// same call site of a loop every time: site_shares.h needs a fair sample), so
// they spread over the window instead of taking its first waits. Windows of
// 21 waits on one lock: the first walked, each later one with probability
// 1/7 until the budget of 3 is spent. A first later walk at position 1 or 2
// has probability 1 - (6/7)^2 = 0.27; over 100 windows more than half of
// them landing there would mean bunching (p < 1e-6 for a fair draw).
TEST_F(StackBudget, WalksAfterABusyWindowAreDrawnAcrossIt)
{
    uint64_t ms = 0;
    at(ms);
    waitsWalked(21);
    unsigned early = 0, windows = 0;
    uint64_t walks = 0;
    for (unsigned w = 0; w < 100; ++w) {
        at(ms += 12);
        ASSERT_EQ(waitsWalked(1), 1u) << "the first wait on the lock in window " << w;
        uint64_t here = 0;
        unsigned firstAt = 0;
        for (unsigned i = 1; i <= 20; ++i)
            if (waitsWalked(1) && !here++)
                firstAt = i;
        ASSERT_LE(here, 2u) << "window " << w << " walked past the budget of 3";
        walks += here;
        if (here) {
            ++windows;
            early += firstAt <= 2;
        }
    }
    EXPECT_GT(windows, 80u) << "after a busy window some later waits are walked (P(none of 20) = 0.05)";
    EXPECT_LT(early, windows / 2) << "walks bunch at the start of the window: " << early << " of " << windows;
    EXPECT_GT(walks, 100u) << "later waits walked at about 1 in 7 (expected ~175 of 2000, the budget allowing)";
}

class TimingBudget : public ClockedPairing {
protected:
    void configure(ls_wait& w) override
    {
        ClockedPairing::configure(w);
        w.rodata->time_window_events = 3;
    }

    // n spin waits on lock; returns how many of them were timed.
    uint64_t waitsTimed(unsigned n, uint64_t lock = A)
    {
        for (unsigned i = 0; i < n; ++i) {
            begin(lock, LS_LCB_F_SPIN);
            end(lock, 0);
        }
        done_ += n;
        const uint64_t now = timedSoFar();
        const uint64_t timed = now - timed_;
        timed_ = now;
        return timed;
    }

    // Timed waits in the histograms and the rings: the slots, which only
    // timed waits fill (count has the untimed ones too).
    uint64_t timedSoFar() const
    {
        uint64_t n = 0;
        for (const auto& w : lockscope::probes::detail::readWaits(bpf_map__fd(skel_->maps.waits)))
            if (!(w.record.flags & LS_WAIT_F_WEIGHTED))
                n += lockscope::probes::detail::timedCount(w.hist);
        return n + undrained().size(); // ended waits in the rings are all timed
    }

    // Every wait as userspace reads them: the histogram map, the rings and
    // the counts not yet flushed, by key; with the weighted samples
    // (LS_WAIT_F_WEIGHTED) only when asked.
    std::vector<lockscope::probes::detail::RawWait> allWaits(bool with_weighted = false) const
    {
        namespace d = lockscope::probes::detail;
        std::vector<d::RawWait> raw = d::readWaits(bpf_map__fd(skel_->maps.waits));
        std::vector<lockscope::probes::HolderRecord> holders;
        d::addUndrained(undrained(), raw, holders);
        d::addPendingCounts(pending(), raw);
        if (!with_weighted)
            std::erase_if(raw, [](const d::RawWait& w) { return (w.record.flags & LS_WAIT_F_WEIGHTED) != 0; });
        return raw;
    }

    // (lock, flags) -> waits counted, timed or not.
    std::map<std::pair<uint64_t, uint32_t>, uint64_t> countsByKey() const
    {
        std::map<std::pair<uint64_t, uint32_t>, uint64_t> out;
        for (const auto& w : allWaits())
            out[{ w.record.lock_addr, w.record.flags }] += w.hist.count;
        return out;
    }

    // The records userspace makes of every wait so far, by (lock, flags)
    // over all stacks.
    std::map<std::pair<uint64_t, uint32_t>, lockscope::probes::LockRecord> records() const
    {
        std::vector<lockscope::probes::detail::RawWait> raw = allWaits(true);
        std::vector<lockscope::probes::LockRecord> out;
        lockscope::probes::detail::finishWaits(raw, out);
        std::map<std::pair<uint64_t, uint32_t>, lockscope::probes::LockRecord> byKey;
        for (const auto& r : out) {
            auto& into = byKey[{ r.lock_addr, r.flags }];
            into.hist.merge(r.hist);
            into.untimed += r.untimed;
        }
        return byKey;
    }

    // A window busy enough that the next one times 1 in 6 waits per lock.
    void busyWindow()
    {
        at(0);
        waitsTimed(1);
        at(12);
        waitsTimed(20);
        at(24);
    }

    uint64_t done_ = 0, timed_ = 0;
};

TEST_F(TimingBudget, TimesOneInNPerLockAboveTheBudgetAndCountsEveryWait)
{
    // A window with one wait, so the next one times every wait.
    at(0);
    waitsTimed(1);
    at(12);
    const uint64_t quiet = waitsTimed(20); // the first closes the quiet window
    at(24);
    // 20 waits in the last window, which lasted 12 ms: 16 per 10 ms, budget
    // 3, so 1 in 6 per lock from the wait that closes it on.
    std::vector<uint64_t> seq;
    for (int i = 0; i < 25; ++i)
        seq.push_back(waitsTimed(1));
    const uint64_t firstOfB = waitsTimed(1, B); // a rare lock next to a hot one
    EXPECT_EQ(quiet, 20u) << "after a quiet window every wait is timed";
    for (size_t i = 0; i < seq.size(); ++i)
        EXPECT_EQ(seq[i], i % 6 == 0 ? 1u : 0u) << "wait " << i << ": 1 in 6 is timed";
    EXPECT_EQ(firstOfB, 1u) << "another lock's first wait is timed whatever the period";
    uint64_t counted = 0;
    for (const auto& w : allWaits()) {
        counted += w.hist.count;
        if (w.hist.count > lockscope::probes::detail::timedCount(w.hist)) {
            EXPECT_EQ(w.record.kstack_id, lockscope::probes::kStackUnsampled) << "an untimed wait is never walked";
        }
    }
    EXPECT_EQ(counted, done_) << "every wait is counted, timed or not";
    EXPECT_EQ(waitEvents(), done_);
}

// A hot mutex's spins take the budget like a spinlock's waits: 1 in N timed
// per lock, each counted once, none left pending on the task. A wait that
// begins asleep (an rwsem, a mutex past its spin) is always timed.
TEST_F(TimingBudget, MutexSpinsShareTheBudgetSleepsAreAlwaysTimed)
{
    busyWindow();
    std::vector<uint64_t> timed;
    for (int i = 0; i < 13; ++i) {
        const uint64_t before = timedSoFar();
        begin(M, LS_LCB_F_MUTEX | LS_LCB_F_SPIN);
        end(M, 0);
        timed.push_back(timedSoFar() - before);
    }
    for (size_t i = 0; i < timed.size(); ++i)
        EXPECT_EQ(timed[i], i % 6 == 0 ? 1u : 0u) << "mutex spin " << i << ": 1 in 6 is timed";
    const uint64_t before = timedSoFar();
    for (int i = 0; i < 5; ++i) {
        begin(B, LS_LCB_F_WRITE); // rwsem
        end(B, 0);
    }
    EXPECT_EQ(timedSoFar() - before, 5u) << "every sleep is timed";
    auto counts = countsByKey();
    EXPECT_EQ((counts[{ M, LS_LCB_F_MUTEX | LS_LCB_F_SPIN }]), 13u) << "every mutex wait is counted";
    EXPECT_EQ((counts[{ B, LS_LCB_F_WRITE }]), 5u);
    EXPECT_FALSE(taskPending());
    EXPECT_EQ(counter(LS_C_UNMATCHED), 0u);
}

// An untimed mutex wait is counted by its end, under the flags it ended
// with: one that got the lock spinning is a "mutex:spin" wait, and one that
// slept a "mutex" wait, timed from its sleep (sleeps are the long, rare
// waits a sample would miss); an aborted one is counted apart.
TEST_F(TimingBudget, AnUntimedMutexWaitIsCountedAsWhatItEndedAsAndTimedOnceItSleeps)
{
    busyWindow();
    begin(M, LS_LCB_F_MUTEX | LS_LCB_F_SPIN); // timed: M's first; the next 5 on M are not
    end(M, 0);
    const auto before = countsByKey();
    const uint64_t timedBefore = timedSoFar();
    const uint64_t abortedBefore = counter(LS_C_ABORTED);
    begin(M, LS_LCB_F_MUTEX | LS_LCB_F_SPIN); // gets it spinning
    end(M, 0);
    EXPECT_EQ(timedSoFar(), timedBefore) << "a wait that only spun stays untimed";
    at(30);
    begin(M, LS_LCB_F_MUTEX | LS_LCB_F_SPIN); // spins, then sleeps from 31 ms to 34 ms
    at(31);
    begin(M, LS_LCB_F_MUTEX);
    at(34);
    end(M, 0);
    begin(M, LS_LCB_F_MUTEX | LS_LCB_F_SPIN); // killed while asleep
    begin(M, LS_LCB_F_MUTEX);
    end(M, -4);
    auto after = countsByKey();
    EXPECT_EQ(timedSoFar(), timedBefore + 1) << "the wait that slept is timed";
    const auto w = waits();
    ASSERT_TRUE(w.count({ M, LS_LCB_F_MUTEX }));
    EXPECT_EQ((w.at({ M, LS_LCB_F_MUTEX }).total()), 3000000u) << "timed from its sleep: 3 ms";
    EXPECT_EQ((after[{ M, LS_LCB_F_MUTEX }]), 1u);
    EXPECT_EQ((after[{ M, LS_LCB_F_MUTEX | LS_LCB_F_SPIN }]), (before.at({ M, LS_LCB_F_MUTEX | LS_LCB_F_SPIN }) + 1));
    EXPECT_EQ(counter(LS_C_ABORTED), abortedBefore + 1);
    EXPECT_FALSE(taskPending());
    EXPECT_EQ(counter(LS_C_UNMATCHED) + counter(LS_C_STALE), 0u);
}

// An untimed wait is counted at its begin in a per-CPU cache; its end only
// pops it. Whatever the mix of keys (evictions) and however long a key stays
// hot (flushes at a threshold), the counts per key are the begins per key.
TEST_F(TimingBudget, CountedAtBeginTheCountsPerKeyAreExact)
{
    busyWindow();
    std::map<std::pair<uint64_t, uint32_t>, uint64_t> begun;
    for (const auto& [k, n] : countsByKey())
        begun[k] = n;
    auto waitOn = [&](uint64_t lock, uint32_t flags, unsigned n) {
        for (unsigned i = 0; i < n; ++i) {
            begin(lock, flags);
            end(lock, 0);
        }
        begun[{ lock, flags }] += n;
    };
    waitOn(A, LS_LCB_F_SPIN, 3000); // past any flush threshold
    for (int round = 0; round < 3; ++round) {
        waitOn(A, LS_LCB_F_SPIN | LS_LCB_F_READ, 13); // same lock, another key: evicts A's entry
        waitOn(A, LS_LCB_F_SPIN, 11);
        for (uint64_t l = 0; l < 24; ++l) // more locks than cache slots
            waitOn(X + l * 0x40, LS_LCB_F_SPIN, 9);
    }
    EXPECT_FALSE(pending().empty()) << "the test should leave counts in the cache for userspace to add";
    EXPECT_EQ(countsByKey(), begun);
    uint64_t total = 0;
    for (const auto& [k, n] : begun)
        total += n;
    EXPECT_EQ(waitEvents(), total);
    EXPECT_LE(undrained().size(), size_t { LS_WAIT_DONE });
    EXPECT_EQ(cpuDepth(), 0u);
    EXPECT_EQ(counter(LS_C_UNMATCHED), 0u);
    EXPECT_EQ(counter(LS_C_STALE), 0u);
}

TEST_F(TimingBudget, ACountedWaitLeavesNoRingSlotAndNestsWithATimedOne)
{
    busyWindow();
    begin(A, LS_LCB_F_SPIN); // timed: the next 5 on A are not
    end(A, 0);
    const auto countsBefore = countsByKey();
    begin(A, LS_LCB_F_SPIN); // counted (its begin drains the ring too)
    begin(B, LS_LCB_F_SPIN); // an irq's wait on another lock, timed (B's first)
    end(B, 0);
    end(A, 0);
    auto counts = countsByKey();
    EXPECT_EQ((counts[{ A, LS_LCB_F_SPIN }]), (countsBefore.at({ A, LS_LCB_F_SPIN }) + 1));
    EXPECT_EQ((counts[{ B, LS_LCB_F_SPIN }]), 1u);
    const auto ring = undrained();
    ASSERT_EQ(ring.size(), 1u) << "only B's timed end takes a ring slot";
    EXPECT_EQ(ring[0].lock, B);
    EXPECT_EQ(cpuDepth(), 0u);
    EXPECT_EQ(counter(LS_C_UNMATCHED), 0u);
    EXPECT_EQ(counter(LS_C_STALE), 0u);
}

// Long waits are timed whatever the budget (exact_wait_ns, here 2 ms): an
// untimed wait keeps its begin's clock, and its end times it when the
// coarse clock (the test clock here) shows it lasted. Such waits get a key
// of their own (LS_WAIT_F_TICKED) that userspace folds back in.
class ExactTail : public TimingBudget {
protected:
    void configure(ls_wait& w) override
    {
        TimingBudget::configure(w);
        w.rodata->exact_wait_ns = kExact;
    }

    static constexpr uint64_t kExact = 2000000;
};

TEST_F(ExactTail, AnUntimedSpinATickWentByInIsTimedInItsBucket)
{
    busyWindow();
    begin(A, LS_LCB_F_SPIN); // timed: A's first; the next 5 on A are not
    end(A, 0);
    const uint64_t timedBefore = timedSoFar();
    at(30);
    later(100000);
    begin(A, LS_LCB_F_SPIN); // untimed, counted at its begin
    later(800000);
    end(A, 0); // 0.8 ms within one tick
    EXPECT_EQ(timedSoFar(), timedBefore) << "a wait no tick went by in stays untimed";
    begin(A, LS_LCB_F_SPIN); // at 30.9 ms
    later(300000);
    end(A, 0); // 0.3 ms, over the tick at 31 ms
    EXPECT_EQ(timedSoFar(), timedBefore + 1) << "a wait a tick went by in is timed, however short";
    at(40);
    begin(A, LS_LCB_F_SPIN);
    at(45);
    end(A, 0); // 5 ms
    EXPECT_EQ(timedSoFar(), timedBefore + 2) << "a long wait is timed";
    const auto r = records();
    ASSERT_TRUE(r.count({ A, LS_LCB_F_SPIN }));
    const auto& a = r.at({ A, LS_LCB_F_SPIN });
    EXPECT_EQ(a.hist.count(), (countsByKey()[{ A, LS_LCB_F_SPIN }])) << "counted once, at its begin";
    EXPECT_EQ(a.hist.max(), 5000000u) << "the max is the long wait's own time";
    EXPECT_EQ(a.hist.bucket(lockscope::Log2Hist::bucketOf(5000000)), 1u) << "in its own bucket";
    EXPECT_EQ(a.hist.bucket(lockscope::Log2Hist::bucketOf(300000)), 1u) << "in its own bucket";
    EXPECT_TRUE(a.hist.consistent());
    EXPECT_GT(a.untimed, 0u);
    EXPECT_FALSE(r.count({ A, LS_LCB_F_SPIN | LS_WAIT_F_TICKED })) << "folded back into its key";
    EXPECT_EQ(cpuDepth(), 0u);
    EXPECT_EQ(counter(LS_C_UNMATCHED) + counter(LS_C_STALE), 0u);
}

// A mutex's untimed spin that sleeps is timed from its begin (as perf times
// it); one that spun long is timed at its end.
TEST_F(ExactTail, AnUntimedMutexWaitIsTimedFromItsBegin)
{
    busyWindow();
    begin(M, LS_LCB_F_MUTEX | LS_LCB_F_SPIN); // timed: M's first; the next 5 on M are not
    end(M, 0);
    const auto before = records();
    at(30);
    begin(M, LS_LCB_F_MUTEX | LS_LCB_F_SPIN); // spins from 30 ms, sleeps from 31 ms to 34 ms
    at(31);
    begin(M, LS_LCB_F_MUTEX);
    at(34);
    end(M, 0);
    at(40);
    begin(M, LS_LCB_F_MUTEX | LS_LCB_F_SPIN); // spins 3 ms and gets it
    at(43);
    end(M, 0);
    const auto r = records();
    ASSERT_TRUE(r.count({ M, LS_LCB_F_MUTEX }));
    EXPECT_EQ((r.at({ M, LS_LCB_F_MUTEX }).hist.total()), 4000000u) << "timed from its first begin: 4 ms";
    const auto& spin = r.at({ M, LS_LCB_F_MUTEX | LS_LCB_F_SPIN });
    EXPECT_EQ(spin.hist.count(), before.at({ M, LS_LCB_F_MUTEX | LS_LCB_F_SPIN }).hist.count() + 1);
    EXPECT_EQ(spin.hist.max(), 3000000u);
    EXPECT_FALSE(taskPending());
    EXPECT_EQ(counter(LS_C_UNMATCHED) + counter(LS_C_STALE), 0u);
}

// The weighted samples the untimed waits are given the times of
// (LS_WAIT_F_WEIGHTED): every unwalked timed wait weighted by the untimed
// waits of its lock it stands for. Without stacks nothing is walked.
class Weighting : public TimingBudget {
protected:
    void configure(ls_wait& w) override
    {
        TimingBudget::configure(w);
        w.rodata->stacks_on = false;
    }

    // n spin waits on A, each ns long.
    void waitsOf(unsigned n, uint64_t ns)
    {
        for (unsigned i = 0; i < n; ++i) {
            begin(A, LS_LCB_F_SPIN);
            later(ns);
            end(A, 0);
        }
    }

    // A's weighted samples as userspace reads them.
    ls_hist weightedOfA() const
    {
        ls_hist h {};
        for (const auto& w : allWaits(true))
            if (w.record.lock_addr == A && (w.record.flags & LS_WAIT_F_WEIGHTED))
                h = w.hist;
        return h;
    }
};

// A quiet window times every wait (1 us each), so the next, busy one times 1
// in 6 of its waits (4 us each): only those stand for untimed waits, and the
// untimed ones are given 4 us, as they were, not the timed waits' mostly 1 us.
TEST_F(Weighting, UntimedWaitsTakeTheTimesOfTheTimedOnesOfTheirStretch)
{
    at(0);
    waitsOf(1, 1000);
    at(12);
    waitsOf(20, 1000); // all timed: the window before had 1 wait
    at(24);
    waitsOf(12, 4000); // 1 in 6 timed from the first on
    const ls_hist w = weightedOfA();
    EXPECT_EQ(w.count, 10u) << "2 timed waits standing for 5 each";
    EXPECT_EQ(w.slots[lockscope::Log2Hist::bucketOf(4000)], 10u);
    EXPECT_EQ(w.total, 40000u);
    const auto r = records();
    ASSERT_TRUE(r.count({ A, LS_LCB_F_SPIN }));
    const auto& a = r.at({ A, LS_LCB_F_SPIN });
    EXPECT_EQ(a.untimed, 10u);
    EXPECT_EQ(a.hist.count(), 33u);
    EXPECT_EQ(a.hist.bucket(lockscope::Log2Hist::bucketOf(4000)), 12u);
    EXPECT_EQ(a.hist.total(), 21u * 1000 + 12u * 4000) << "every wait at its own length";
}

// Waits a tick went by in are timed apart (LS_WAIT_F_TICKED) and stay out of
// the sample as out of the untimed waits.
class WeightingExact : public Weighting {
protected:
    void configure(ls_wait& w) override
    {
        Weighting::configure(w);
        w.rodata->exact_wait_ns = 2000000;
    }
};

TEST_F(WeightingExact, TimedWaitsATickWentByInAreNoSample)
{
    busyWindow();
    waitsOf(1, 1000); // A's first after the window: timed, stands for the next 5
    const ls_hist before = weightedOfA();
    waitsOf(5, 1000);
    at(40);
    later(900000);
    waitsOf(1, 200000); // timed, over the tick at 41 ms
    waitsOf(5, 1000);
    const ls_hist after = weightedOfA();
    EXPECT_EQ(after.count, before.count) << "the wait over a tick stands for nothing";
    EXPECT_EQ(after.max, 1000u);
    const auto r = records();
    ASSERT_TRUE(r.count({ A, LS_LCB_F_SPIN }));
    EXPECT_EQ(r.at({ A, LS_LCB_F_SPIN }).hist.max(), 200000u) << "but is a wait of its key";
}

// With stacks, a timed wait under a binding budget is walked on a coin toss;
// a walked one is no sample (its walk is inside its time) and its weight is
// dropped, not passed on: the weighted samples are exactly the unwalked
// timed waits, 5 each.
class WeightingWalked : public TimingBudget { };

TEST_F(WeightingWalked, WalkedTimedWaitsAreNoSampleAndStandForNothing)
{
    busyWindow();
    const uint64_t stackUnsampledBefore = counter(LS_C_STACK_UNSAMPLED);
    uint64_t untimedBefore = 0;
    for (const auto& w : allWaits())
        untimedBefore += w.hist.count - lockscope::probes::detail::timedCount(w.hist);
    for (unsigned i = 0; i < 600; ++i) { // 100 timed, each followed by 5 untimed
        begin(A, LS_LCB_F_SPIN);
        later(1000 + i);
        end(A, 0);
    }
    uint64_t untimed = 0, unwalkedTimedMin = ~0ULL, unwalkedTimedMax = 0, unwalkedTimed = 0;
    ls_hist w {};
    for (const auto& x : allWaits(true)) {
        if (x.record.flags & LS_WAIT_F_WEIGHTED) {
            w = x.hist;
            continue;
        }
        const uint64_t timed = lockscope::probes::detail::timedCount(x.hist);
        untimed += x.hist.count - timed;
        if (x.record.kstack_id == lockscope::probes::kStackUnsampled && timed) {
            unwalkedTimed += timed;
            unwalkedTimedMin = x.hist.min;
            unwalkedTimedMax = x.hist.max;
        }
    }
    untimed -= untimedBefore;
    EXPECT_EQ(untimed, 500u);
    EXPECT_GT(unwalkedTimed, 20u) << "about half of the 100 timed waits are left unwalked";
    EXPECT_LT(unwalkedTimed, 80u) << "about half of the 100 timed waits are walked";
    EXPECT_EQ(counter(LS_C_STACK_UNSAMPLED) - stackUnsampledBefore, unwalkedTimed);
    EXPECT_EQ(w.count, 5 * unwalkedTimed) << "each unwalked timed wait stands for the 5 untimed after it";
    EXPECT_EQ(w.min, unwalkedTimedMin) << "only unwalked waits are samples";
    EXPECT_EQ(w.max, unwalkedTimedMax) << "only unwalked waits are samples";
}

// The rate the wait rate cap is compared with (agent --wait-rate-cap) is
// every contention_begin the programs run for: a filter (an address here,
// a cgroup in the agent) leaves the wait out of the figures, not out of
// what the programs cost the machine.
class FilteredPairing : public Pairing {
protected:
    void configure(ls_wait& w) override
    {
        w.rodata->filter_addr_on = true; // and no address in filter_addrs
        w.rodata->count_begins = true;
    }
};

TEST_F(FilteredPairing, BeginsAreCountedBeforeTheFiltersForTheRateCap)
{
    for (int i = 0; i < 3; ++i) {
        begin(A, LS_LCB_F_SPIN);
        end(A, 0);
    }
    begin(A, LS_LCB_F_SPIN); // files the ended waits, if any were kept
    EXPECT_EQ(counter(LS_C_WAIT_BEGINS), 4u);
    EXPECT_EQ(waitEvents(), 0u) << "the filter left every wait out";
    EXPECT_TRUE(waits().empty());
}

TEST_F(Pairing, BeginsAreNotCountedWhereNothingSamples)
{
    begin(A, LS_LCB_F_SPIN);
    end(A, 0);
    EXPECT_EQ(counter(LS_C_WAIT_BEGINS), 0u);
}
