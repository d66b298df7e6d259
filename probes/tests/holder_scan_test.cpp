// SPDX-License-Identifier: GPL-2.0-or-later
// Holder stacks, run for real: the hold logic (hold_common.bpf.h, through the
// hold_testrun raw_tp wrappers) acquires a lock on CPU 0, and the real wait
// programs of wait.bpf.c begin and end a contended wait for it on CPU 1
// (BPF_PROG_TEST_RUN with BPF_F_TEST_RUN_ON_CPU), sharing one held map, one
// stack map and one counters map between the two objects as the session does.
#include <algorithm>
#include <cstdio>
#include <map>
#include <memory>
#include <string>
#include <tuple>
#include <vector>

#include <sched.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <gtest/gtest.h>

#include "lockscope_bpf.h" // before the skeletons, which use its structs

#include "hold_testrun.skel.h"
#include "bpf_util.h"
#include "holder_table.h"
#include "test_support.h"
#include "wait_hist.h"
#include "wait.skel.h"

namespace {

constexpr uint64_t A = 0xffff888000001000ULL;
constexpr uint64_t B = 0xffff888000002000ULL;
constexpr uint32_t kHolderCpu = 0, kWaiterCpu = 1;

struct Fd {
    int fd = -1;
    ~Fd()
    {
        if (fd >= 0)
            close(fd);
    }
};

bool cpuOnline(unsigned cpu)
{
    if (cpu == 0)
        return true;
    FILE* f = std::fopen(("/sys/devices/system/cpu/cpu" + std::to_string(cpu) + "/online").c_str(), "r");
    if (!f)
        return false;
    int c = std::fgetc(f);
    std::fclose(f);
    return c == '1';
}

class HolderScan : public ::testing::Test {
protected:
    void SetUp() override
    {
        LOCKSCOPE_REQUIRE_ROOT();
        ncpus_ = libbpf_num_possible_cpus();
        if (ncpus_ < 2 || !cpuOnline(kWaiterCpu))
            GTEST_SKIP() << "skipped: holder attribution needs a second online CPU (the holder and the "
                            "waiter must run on different CPUs), this machine has "
                         << ncpus_;
        // The waiter's runs execute on this thread, not in an IPI on the
        // waiter CPU: an IPI's stack depends on what that CPU was doing, and
        // the waiter's stack is part of the holder key.
        ASSERT_EQ(sched_getaffinity(0, sizeof saved_, &saved_), 0);
        cpu_set_t waiter;
        CPU_ZERO(&waiter);
        CPU_SET(kWaiterCpu, &waiter);
        ASSERT_EQ(sched_setaffinity(0, sizeof waiter, &waiter), 0);
        pinned_ = true;
        stacks_.fd = bpf_map_create(BPF_MAP_TYPE_STACK_TRACE, "t_stacks", 4, 127 * 8, 1024, nullptr);
        held_.fd = bpf_map_create(
            BPF_MAP_TYPE_PERCPU_ARRAY, "t_held", 4, sizeof(ls_held_stack), 1, nullptr);
        released_.fd = bpf_map_create(
            BPF_MAP_TYPE_PERCPU_ARRAY, "t_released", 4, sizeof(ls_released_ring), 1, nullptr);
        counters_.fd = bpf_map_create(BPF_MAP_TYPE_PERCPU_ARRAY, "t_counters", 4, 8, LS_C_NR, nullptr);
        ASSERT_GE(stacks_.fd, 0);
        ASSERT_GE(held_.fd, 0);
        ASSERT_GE(released_.fd, 0);
        ASSERT_GE(counters_.fd, 0);
    }

    void share(bpf_object* obj)
    {
        for (auto [name, fd] : { std::pair { "stacks", stacks_.fd }, std::pair { "held", held_.fd },
                 std::pair { "released", released_.fd }, std::pair { "counters", counters_.fd } })
            ASSERT_EQ(bpf_map__reuse_fd(bpf_object__find_map_by_name(obj, name), fd), 0) << name;
    }

    // scan: holder_scan in the wait object's read-only data (--holder-stacks);
    // attached: the runtime switch the session flips once the hold probe is attached.
    void load(bool scan = true, bool attached = true)
    {
        hold_.reset(ls_hold_testrun__open());
        ASSERT_TRUE(hold_);
        hold_->rodata->holder_track = scan;
        share(hold_->obj);
        ASSERT_EQ(ls_hold_testrun__load(hold_.get()), 0);

        wait_.reset(ls_wait__open());
        ASSERT_TRUE(wait_);
        auto& p = wait_->progs;
        for (bpf_program* prog : { p.wait_begin_btf, p.wait_end_btf, p.wait_begin_tp, p.wait_end_tp })
            bpf_program__set_autoload(prog, false);
        wait_->rodata->holder_scan = scan;
        wait_->rodata->holder_nr_cpus = static_cast<uint32_t>(std::min(ncpus_, int { LS_HOLDER_MAX_CPUS }));
        share(wait_->obj);
        ASSERT_EQ(ls_wait__load(wait_.get()), 0) << "the verifier rejected wait.bpf.c with the holder scan";
        const uint32_t slot = LS_RT_HOLDER_SCAN, on = attached ? 1 : 0;
        ASSERT_EQ(bpf_map_update_elem(bpf_map__fd(wait_->maps.runtime), &slot, &on, BPF_ANY), 0);
    }

    void run(bpf_program* prog, uint32_t cpu, uint64_t a0, uint64_t a1)
    {
        uint64_t args[2] = { a0, a1 };
        LIBBPF_OPTS(bpf_test_run_opts, opts, .ctx_in = args, .ctx_size_in = sizeof args,
            .flags = BPF_F_TEST_RUN_ON_CPU, .cpu = cpu);
        ASSERT_EQ(bpf_prog_test_run_opts(bpf_program__fd(prog), &opts), 0) << "BPF_PROG_TEST_RUN failed";
    }
    void lock(uint32_t cpu, uint64_t l) { run(hold_->progs.test_acquired, cpu, l, LS_HOLD_SPIN); }
    void unlock(uint32_t cpu, uint64_t l) { run(hold_->progs.test_release, cpu, l, 0); }
    void begin(uint32_t cpu, uint64_t l, uint32_t flags = LS_LCB_F_SPIN)
    {
        run(wait_->progs.wait_begin_raw, cpu, l, flags);
    }
    void end(uint32_t cpu, uint64_t l, int ret = 0)
    {
        run(wait_->progs.wait_end_raw, cpu, l, static_cast<uint64_t>(static_cast<int64_t>(ret)));
    }

    // The stack id the hold logic stored for the i-th held lock of cpu.
    int32_t heldStack(uint32_t cpu, uint32_t i) const
    {
        std::vector<ls_held_stack> v(static_cast<size_t>(ncpus_));
        const uint32_t key = 0;
        EXPECT_EQ(bpf_map_lookup_elem(held_.fd, &key, v.data()), 0);
        EXPECT_GT(v[cpu].depth, i);
        return v[cpu].e[i].kstack;
    }
    // Overwrites that stack id, as if the holder's stack walk were still running (or had just ended).
    void setHeldStack(uint32_t cpu, uint32_t i, int32_t kstack)
    {
        std::vector<ls_held_stack> v(static_cast<size_t>(ncpus_));
        const uint32_t key = 0;
        ASSERT_EQ(bpf_map_lookup_elem(held_.fd, &key, v.data()), 0);
        v[cpu].e[i].kstack = kstack;
        ASSERT_EQ(bpf_map_update_elem(held_.fd, &key, v.data(), BPF_ANY), 0);
    }

    std::map<std::tuple<uint64_t, int32_t, int32_t>, ls_holder_val> holders() const
    {
        std::map<std::tuple<uint64_t, int32_t, int32_t>, ls_holder_val> out;
        const int fd = bpf_map__fd(wait_->maps.holders);
        ls_holder_key key {}, next {};
        const void* prev = nullptr;
        while (bpf_map_get_next_key(fd, prev, &next) == 0) {
            key = next;
            prev = &key;
            ls_holder_val v {};
            if (bpf_map_lookup_elem(fd, &key, &v) == 0)
                out[{ key.lock, key.wait_kstack, key.holder_kstack }] = v;
        }
        for (const ls_wait_done& d : undrained())
            if (d.holder_state == LS_HOLDER_FOUND) {
                auto& v = out[{ d.lock, d.kstack, d.holder }];
                v.count += 1;
                v.wait_ns += d.delta;
            }
        return out;
    }

    // Waits recorded for lock: (count, total ns) over every key.
    std::pair<uint64_t, uint64_t> waits(uint64_t lock) const
    {
        const int fd = bpf_map__fd(wait_->maps.waits);
        ls_wait_key key {}, next {};
        const void* prev = nullptr;
        uint64_t count = 0, total = 0;
        while (bpf_map_get_next_key(fd, prev, &next) == 0) {
            key = next;
            prev = &key;
            std::vector<ls_hist> cpus(static_cast<size_t>(ncpus_));
            if (key.lock != lock || bpf_map_lookup_elem(fd, &key, cpus.data()) != 0)
                continue;
            for (const ls_hist& h : cpus) {
                count += h.count;
                total += h.total;
            }
        }
        for (const ls_wait_done& d : undrained())
            if (d.lock == lock) {
                count += 1;
                total += d.delta;
            }
        return { count, total };
    }

    // Ended waits the next begin on their CPU would add to waits and holders.
    std::vector<ls_wait_done> undrained() const
    {
        return lockscope::probes::detail::undrainedWaits(bpf_map__fd(wait_->maps.done));
    }

    uint64_t counter(ls_counter c) const
    {
        std::vector<uint64_t> v(static_cast<size_t>(ncpus_));
        const uint32_t key = c;
        if (bpf_map_lookup_elem(counters_.fd, &key, v.data()) != 0)
            return UINT64_MAX;
        uint64_t s = 0;
        for (uint64_t x : v)
            s += x;
        return s;
    }

    struct DestroyHold {
        void operator()(ls_hold_testrun* s) const { ls_hold_testrun__destroy(s); }
    };
    struct DestroyWait {
        void operator()(ls_wait* s) const { ls_wait__destroy(s); }
    };
    int ncpus_ = 0;
    void TearDown() override
    {
        if (pinned_)
            sched_setaffinity(0, sizeof saved_, &saved_);
    }

    Fd stacks_, held_, released_, counters_;
    cpu_set_t saved_ {};
    bool pinned_ = false;
    std::unique_ptr<ls_hold_testrun, DestroyHold> hold_;
    std::unique_ptr<ls_wait, DestroyWait> wait_;
};

TEST_F(HolderScan, WaitOnAnotherCpuIsAttributedToTheHoldersStack)
{
    load();
    lock(kHolderCpu, A);
    const int32_t holderStack = heldStack(kHolderCpu, 0);
    ASSERT_GE(holderStack, 0) << "the hold logic took no stack for the holder";
    begin(kWaiterCpu, A);
    end(kWaiterCpu, A);
    unlock(kHolderCpu, A);

    const auto h = holders();
    ASSERT_EQ(h.size(), 1u);
    const auto& [key, val] = *h.begin();
    EXPECT_EQ(std::get<0>(key), A);
    EXPECT_EQ(std::get<2>(key), holderStack) << "attributed to another stack than the holder's";
    EXPECT_GE(std::get<1>(key), 0) << "the waiter's stack is kept apart from the holder's";
    EXPECT_EQ(val.count, 1u);
    const auto [count, total] = waits(A);
    EXPECT_EQ(count, 1u);
    EXPECT_EQ(val.wait_ns, total) << "the holder's wait time is the wait's own";
    EXPECT_EQ(counter(LS_C_HOLDER_MISSING), 0u);
}

// The holder publishes the lock before its stack walk (the walk is most of
// the critical section when the hold probe runs); a wait that begins during
// the walk finds the stack in the holder's releases when it ends.
TEST_F(HolderScan, HolderStillWalkingItsStackIsResolvedAtTheEnd)
{
    load();
    lock(kHolderCpu, A);
    const int32_t holderStack = heldStack(kHolderCpu, 0);
    ASSERT_GE(holderStack, 0);
    setHeldStack(kHolderCpu, 0, LS_STACK_PENDING);
    begin(kWaiterCpu, A);
    setHeldStack(kHolderCpu, 0, holderStack); // the walk ends
    lock(kHolderCpu, B);                      // other locks come and go on the holder's CPU
    unlock(kHolderCpu, B);
    unlock(kHolderCpu, A);                    // then the waiter gets A
    end(kWaiterCpu, A);
    const auto h = holders();
    ASSERT_EQ(h.size(), 1u);
    EXPECT_EQ(std::get<0>(h.begin()->first), A);
    EXPECT_EQ(std::get<2>(h.begin()->first), holderStack);
    EXPECT_EQ(counter(LS_C_HOLDER_MISSING), 0u);
}

TEST_F(HolderScan, PendingHolderWhoseReleaseScrolledAwayIsCountedMissing)
{
    load();
    lock(kHolderCpu, A);
    setHeldStack(kHolderCpu, 0, LS_STACK_PENDING);
    begin(kWaiterCpu, A);
    unlock(kHolderCpu, A);
    for (uint64_t i = 1; i <= LS_RELEASED; ++i) { // more releases than the ring keeps
        lock(kHolderCpu, B + i * 64);
        unlock(kHolderCpu, B + i * 64);
    }
    end(kWaiterCpu, A);
    EXPECT_TRUE(holders().empty());
    EXPECT_EQ(counter(LS_C_HOLDER_MISSING), 1u);
}

TEST_F(HolderScan, HolderDeeperInTheHeldStackIsFound)
{
    load();
    lock(kHolderCpu, A);
    lock(kHolderCpu, B); // B nested inside A
    const int32_t bStack = heldStack(kHolderCpu, 1);
    for (int i = 0; i < 3; ++i) {
        begin(kWaiterCpu, B);
        end(kWaiterCpu, B);
    }
    const auto h = holders();
    ASSERT_EQ(h.size(), 1u);
    EXPECT_EQ(std::get<0>(h.begin()->first), B);
    EXPECT_EQ(std::get<2>(h.begin()->first), bStack);
    EXPECT_EQ(h.begin()->second.count, 3u) << "repeated waits accumulate in one entry";
}

TEST_F(HolderScan, NoHolderIsCountedApartAndTheWaitStillRecorded)
{
    load();
    lock(kHolderCpu, A);
    unlock(kHolderCpu, A); // released before the wait began
    begin(kWaiterCpu, A);
    end(kWaiterCpu, A);
    EXPECT_TRUE(holders().empty());
    EXPECT_EQ(counter(LS_C_HOLDER_MISSING), 1u);
    EXPECT_EQ(waits(A).first, 1u);
}

TEST_F(HolderScan, TheWaitersOwnCpuIsNotScanned)
{
    load();
    lock(kWaiterCpu, A); // a stale entry on the waiter's CPU cannot be the holder
    begin(kWaiterCpu, A);
    end(kWaiterCpu, A);
    EXPECT_TRUE(holders().empty());
    EXPECT_EQ(counter(LS_C_HOLDER_MISSING), 1u);
}

TEST_F(HolderScan, SleepingLocksAndRwlocksAreNotScanned)
{
    load();
    lock(kHolderCpu, A);
    begin(kWaiterCpu, A, LS_LCB_F_MUTEX);
    end(kWaiterCpu, A);
    begin(kWaiterCpu, A, LS_LCB_F_SPIN | LS_LCB_F_READ);
    end(kWaiterCpu, A);
    EXPECT_TRUE(holders().empty());
    EXPECT_EQ(counter(LS_C_HOLDER_MISSING), 0u) << "locks the hold probe cannot see are not 'missing'";
    EXPECT_EQ(waits(A).first, 2u);
}

TEST_F(HolderScan, AbortedWaitsNameNoHolder)
{
    load();
    lock(kHolderCpu, A);
    begin(kWaiterCpu, A);
    end(kWaiterCpu, A, -4);
    EXPECT_TRUE(holders().empty());
    EXPECT_EQ(counter(LS_C_ABORTED), 1u);
}

TEST_F(HolderScan, NoScanUntilTheHoldProbeIsAttached)
{
    load(true, false);
    lock(kHolderCpu, A);
    begin(kWaiterCpu, A);
    end(kWaiterCpu, A);
    EXPECT_TRUE(holders().empty());
    EXPECT_EQ(counter(LS_C_HOLDER_MISSING), 0u);
    EXPECT_EQ(waits(A).first, 1u);
}

TEST_F(HolderScan, WithoutHolderStacksTheScanIsCompiledOut)
{
    load(false, true);
    lock(kHolderCpu, A);
    begin(kWaiterCpu, A);
    end(kWaiterCpu, A);
    EXPECT_TRUE(holders().empty());
    EXPECT_EQ(counter(LS_C_HOLDER_MISSING), 0u);
}

// lockscope agent's drains: a wait's holder goes to the generation its
// histogram does (read once at the wait's filing), so each drain takes the
// holders of the waits it takes, none twice; the busy entries stay, emptied,
// and an entry empty for a whole generation is deleted.
TEST_F(HolderScan, DrainsTakeEachWaitsHolderWithItsWait)
{
    namespace d = lockscope::probes::detail;
    load();
    const int holdersFd = bpf_map__fd(wait_->maps.holders);
    auto entries = [&] { return d::keysOf<ls_holder_key>(holdersFd).size(); };
    // n waits on A while CPU 0 holds it; B's wait (no holder) files A's last
    // one, which would otherwise wait in the ring for the window after.
    auto window = [&](int n) {
        if (n) {
            lock(kHolderCpu, A);
            for (int i = 0; i < n; ++i) {
                begin(kWaiterCpu, A);
                end(kWaiterCpu, A);
            }
            unlock(kHolderCpu, A);
        }
        begin(kWaiterCpu, B);
        end(kWaiterCpu, B);
        const d::ClosedGeneration closed = d::closeWaitGeneration(&wait_->bss->wait_gen);
        EXPECT_TRUE(closed.settled) << "membarrier refused: no grace period";
        uint64_t waitNs = 0, waited = 0;
        for (const d::RawWait& w : d::drainWaits(bpf_map__fd(wait_->maps.waits), closed))
            if (w.record.lock_addr == A) {
                waitNs += w.hist.total;
                waited += w.hist.count;
            }
        const std::vector<lockscope::probes::HolderRecord> h = d::drainHolders(holdersFd, closed);
        EXPECT_EQ(waited, uint64_t(n));
        if (n == 0) {
            EXPECT_TRUE(h.empty());
            return;
        }
        EXPECT_EQ(h.size(), 1u);
        for (const auto& r : h) {
            EXPECT_EQ(r.lock_addr, A);
            EXPECT_EQ(r.count, uint64_t(n)) << "each window's holders, none of an earlier one";
            EXPECT_EQ(r.wait_ns, waitNs) << "a holder's wait time is its waits' own, in the same window";
        }
    };
    window(3); // generation 0
    EXPECT_EQ(entries(), 1u) << "the busy entry stays, emptied";
    window(5); // generation 1
    EXPECT_EQ(entries(), 2u);
    window(0); // generation 0 again: its entry had nothing in it
    EXPECT_EQ(entries(), 1u) << "an entry empty for a whole generation is deleted";
    window(2); // generation 1: into the entry kept
    EXPECT_EQ(entries(), 1u);
    EXPECT_TRUE(d::readHolders(holdersFd).empty()) << "everything was drained";
    EXPECT_EQ(counter(LS_C_HOLDER_MISSING), 4u) << "B's waits, one a window, and no more";
}

} // namespace
