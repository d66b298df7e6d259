// SPDX-License-Identifier: GPL-2.0-or-later
// Whole-session behaviour on the running kernel: backend choice and skip
// reasons, syscall latency, CPU sampling, user locks, fork following, and the
// permission error.
#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <map>
#include <thread>

#include <pthread.h>
#include <sys/ipc.h>
#include <sys/sem.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include "contention_gen.h"
#include "family.h"
#include "lockscope_bpf.h"
#include "lockscope/probes/probes.h"
#include "test_support.h"

namespace lockscope::probes {
namespace {

const ProbeStatus* findStatus(const Session& s, const std::string& name)
{
    for (const ProbeStatus& st : s.status())
        if (st.name == name)
            return &st;
    return nullptr;
}

bool contains(const std::string& s, const std::string& part)
{
    return s.find(part) != std::string::npos;
}

TEST(Session, EveryRequestedProbeHasAStatusAndSkipsSayWhy)
{
    LOCKSCOPE_REQUIRE_ROOT();
    Options o;
    o.tgids = { static_cast<uint32_t>(getpid()) };
    o.user_locks = defaultUserLocks();
    o.hold = Backend::Auto; // off unless asked for
    o.syscalls = true;      // off unless asked for
    o.functions = Backend::Auto;
    auto s = Session::open(o);
    for (const char* name : { "lock_contention", "spin_hold", "syscall:semtimedop", "syscall:timer_gettime",
             "function:__lock_timer", "function:ipc_lock", "function:sem_lock", "cpu_sampling",
             "user_lock:pthread_mutex_lock", "fork_follow" })
        EXPECT_NE(findStatus(*s, name), nullptr) << name;
    for (const ProbeStatus& st : s->status()) {
        if (!st.attached) {
            EXPECT_FALSE(st.reason.empty()) << st.name << " skipped without a reason";
        } else {
            EXPECT_FALSE(st.hook.empty()) << st.name << " attached without saying how";
        }
    }
    EXPECT_TRUE(findStatus(*s, "lock_contention")->attached);
}

// The code of every loaded program, named and placed as /proc/kallsyms
// (read after the load) names and places it: record uses it to name our own
// frames and to leave out locks our programs take themselves.
TEST(Session, ProgramCodeMatchesKallsyms)
{
    LOCKSCOPE_REQUIRE_ROOT();
    Options o = quietOptions();
    o.wait = Backend::Auto;
    o.syscalls = true;
    auto s = Session::open(o);
    const auto code = s->programCode();
    ASSERT_GE(code.size(), 4u) << "wait begin/end and a syscall enter/exit at least";
    std::map<uint64_t, std::string> kallsyms;
    FILE* f = std::fopen("/proc/kallsyms", "r");
    ASSERT_TRUE(f);
    char line[512];
    while (std::fgets(line, sizeof line, f)) {
        unsigned long long addr = 0;
        char type = 0;
        char name[256] = {};
        if (std::sscanf(line, "%llx %c %255s", &addr, &type, name) == 3 && std::strncmp(name, "bpf_prog_", 9) == 0)
            kallsyms[addr] = name;
    }
    std::fclose(f);
    ASSERT_FALSE(kallsyms.empty()) << "no bpf_prog_ symbols in /proc/kallsyms (kptr_restrict?)";
    bool sawWaitEnd = false;
    for (const auto& c : code) {
        EXPECT_LT(c.begin, c.end);
        auto it = kallsyms.find(c.begin);
        ASSERT_NE(it, kallsyms.end()) << c.name << " at 0x" << std::hex << c.begin << " is not in kallsyms";
        // Subprograms get their own names there; the main program's is ours.
        if (it->second == c.name)
            sawWaitEnd = sawWaitEnd || contains(c.name, "wait_end");
    }
    EXPECT_TRUE(sawWaitEnd) << "no wait_end program named as kallsyms names it";
}

// On a kernel that refuses fentry and has no kprobes, Auto must say both.
TEST(Session, HoldAutoExplainsEachRefusedBackend)
{
    LOCKSCOPE_REQUIRE_ROOT();
    Options o = quietOptions();
    o.wait = Backend::Auto; // open() needs one attachable probe
    o.hold = Backend::Auto;
    auto s = Session::open(o);
    const ProbeStatus* st = findStatus(*s, "spin_hold");
    ASSERT_NE(st, nullptr);
    if (st->attached)
        GTEST_SKIP() << "skipped: this kernel allows hold probes (attached via " << st->hook
                     << "); the refusal path cannot be observed here";
    EXPECT_TRUE(contains(st->reason, "fentry: ")) << st->reason;
    EXPECT_TRUE(contains(st->reason, "kprobe: ")) << st->reason;
    EXPECT_TRUE(contains(st->reason, "(EPERM)") || contains(st->reason, "CONFIG_KPROBES off")
        || contains(st->reason, "attach failed"))
        << st->reason;
}

TEST(Session, HoldProbesRecordRealHolds)
{
    LOCKSCOPE_REQUIRE_ROOT();
    Options o = quietOptions();
    o.wait = Backend::Auto; // open() needs one attachable probe
    o.hold = Backend::Auto;
    auto s = Session::open(o);
    const ProbeStatus* st = findStatus(*s, "spin_hold");
    ASSERT_NE(st, nullptr);
    if (!st->attached)
        GTEST_SKIP() << "skipped: " << st->reason;
    test::semopContention(2, 2000);
    test::timerCalls(2000);
    const Snapshot snap = s->snapshot();
    ASSERT_FALSE(snap.holds.empty());
    for (const LockRecord& r : snap.holds)
        EXPECT_TRUE(r.hist.consistent());
}

TEST(Session, FunctionProbesAreLookedUpAndAttachedOrExplained)
{
    LOCKSCOPE_REQUIRE_ROOT();
    Options o = quietOptions();
    o.wait = Backend::Auto; // open() needs one attachable probe
    o.functions = Backend::Auto;
    Snapshot snap;
    auto s = Session::open(o);
    const ProbeStatus* st = findStatus(*s, "function:__lock_timer");
    ASSERT_NE(st, nullptr);
    if (!st->attached)
        GTEST_SKIP() << "skipped: " << st->reason;
    const uint64_t calls = test::timerCalls(5000);
    snap = s->snapshot();
    auto it = std::find_if(snap.latencies.begin(), snap.latencies.end(),
        [](const LatencyRecord& r) { return r.name == "__lock_timer"; });
    ASSERT_NE(it, snap.latencies.end());
    EXPECT_GE(it->hist.count(), calls);
}

TEST(Session, AbsentKernelFunctionsAreSkippedWithTheReason)
{
    LOCKSCOPE_REQUIRE_ROOT();
    Options o = quietOptions();
    o.wait = Backend::Auto; // keep one probe attachable so open() succeeds
    o.functions = Backend::Auto;
    auto s = Session::open(o);
    int absent = 0;
    for (const ProbeStatus& st : s->status()) {
        if (st.name.rfind("function:", 0) != 0 || st.attached)
            continue;
        EXPECT_FALSE(st.reason.empty());
        if (contains(st.reason, "not in this kernel (inlined or renamed)"))
            ++absent;
    }
    // lock_timer was renamed __lock_timer long ago: no kernel has both.
    EXPECT_GE(absent, 1);
}

TEST(Session, SyscallLatencyCountsEveryCall)
{
    LOCKSCOPE_REQUIRE_ROOT();
    Options o = quietOptions();
    o.syscalls = true;
    auto s = Session::open(o);
    const uint64_t semops = test::semopContention(2, 3000);
    const uint64_t timers = test::timerCalls(4000);
    // Failing calls are counted as errors.
    sembuf op { 0, 1, 0 };
    for (int i = 0; i < 100; ++i)
        EXPECT_EQ(semop(-1, &op, 1), -1);
    const Snapshot snap = s->snapshot();
    auto find = [&](const std::string& name) {
        auto it = std::find_if(snap.latencies.begin(), snap.latencies.end(),
            [&](const LatencyRecord& r) { return r.name == name; });
        return it == snap.latencies.end() ? nullptr : &*it;
    };
    // glibc implements semop() with the semtimedop syscall on some architectures.
    const LatencyRecord* semop_rec = find("semop");
    const LatencyRecord* semtimedop_rec = find("semtimedop");
    const LatencyRecord* timer_rec = find("timer_gettime");
    ASSERT_NE(semop_rec, nullptr);
    ASSERT_NE(semtimedop_rec, nullptr);
    ASSERT_NE(timer_rec, nullptr);
    EXPECT_GE(semop_rec->hist.count() + semtimedop_rec->hist.count(), semops + 100);
    EXPECT_GE(semop_rec->errors + semtimedop_rec->errors, 100u);
    EXPECT_GE(timer_rec->hist.count(), timers);
    const LatencyRecord* busy = semop_rec->hist.count() ? semop_rec : semtimedop_rec;
    EXPECT_TRUE(busy->hist.consistent());
    EXPECT_GT(busy->hist.max(), 0u);
}

// semop() may reach the kernel as semop or semtimedop: the two summed.
struct SemopTally {
    uint64_t calls = 0;
    uint64_t errors = 0;
};

SemopTally semopTally(const Snapshot& snap)
{
    SemopTally t;
    for (const LatencyRecord& r : snap.latencies)
        if (r.name == "semop" || r.name == "semtimedop") {
            t.calls += r.hist.count();
            t.errors += r.errors;
        }
    return t;
}

// Failing semop() calls: each is one enter/exit pair with ret < 0.
void failingSemops(int n)
{
    sembuf op { 0, 1, 0 };
    for (int i = 0; i < n; ++i)
        semop(-1, &op, 1);
}

// The per-thread start slot pairs every enter with its exit exactly once, and
// a process outside the tgid filter adds nothing, also after this process's
// threads have cached their filter result.
TEST(Session, SyscallLatencyPairsExactlyAndFollowsTheTgidFilter)
{
    LOCKSCOPE_REQUIRE_ROOT();
    Options o = quietOptions();
    o.syscalls = true;
    o.follow_forks = false;
    auto s = Session::open(o);
    const SemopTally before = semopTally(s->snapshot());
    failingSemops(250);
    const SemopTally mine = semopTally(s->snapshot());
    EXPECT_EQ(mine.calls - before.calls, 250u);
    EXPECT_EQ(mine.errors - before.errors, 250u);

    const pid_t child = fork();
    ASSERT_GE(child, 0) << "fork: " << std::strerror(errno);
    if (child == 0) {
        failingSemops(500);
        _exit(0);
    }
    int status = 0;
    ASSERT_EQ(waitpid(child, &status, 0), child);
    ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    const SemopTally after = semopTally(s->snapshot());
    EXPECT_EQ(after.calls, mine.calls) << "calls of a process outside the tgid filter were counted";
    EXPECT_EQ(after.errors, mine.errors);
}

// --syscall-sample N: a thread times its 1st, (N+1)th, ... call; every call is
// still counted, exactly.
TEST(Session, SyscallSamplingTimesOneInNAndCountsEveryCall)
{
    LOCKSCOPE_REQUIRE_ROOT();
    Options o = quietOptions();
    o.syscalls = true;
    o.syscall_sample = 4;
    auto s = Session::open(o);
    failingSemops(1002);
    uint64_t timed = 0, errors = 0, all = 0;
    for (const LatencyRecord& r : s->snapshot().latencies) {
        if (r.name != "semop" && r.name != "semtimedop")
            continue;
        EXPECT_EQ(r.sample_period, 4u) << r.name;
        timed += r.hist.count();
        errors += r.errors;
        all += r.all_calls;
    }
    EXPECT_EQ(all, 1002u);
    EXPECT_EQ(timed, 251u) << "calls 0, 4, ..., 1000 of this thread";
    EXPECT_EQ(errors, 251u);
    const ProbeStatus* st = findStatus(*s, "syscall:semtimedop");
    ASSERT_NE(st, nullptr);
    EXPECT_TRUE(contains(st->reason, "1 in 4")) << st->reason;
}

// Auto prefers fentry on the syscall functions; where the kernel refuses it,
// the probe falls back and its status says why fentry was not used.
TEST(Session, SyscallBackendFallsBackFromFentryWithTheReason)
{
    LOCKSCOPE_REQUIRE_ROOT();
    Options o = quietOptions();
    o.syscalls = true;
    o.syscall_backend = Backend::Fentry;
    std::string fentry_refused;
    std::unique_ptr<Session> forced;
    try {
        forced = Session::open(o);
    } catch (const ProbeError& e) {
        // The only probe asked for could not attach: one line naming it and why.
        EXPECT_TRUE(contains(e.what(), "syscall:semtimedop: fentry: ")) << e.what();
        fentry_refused = e.what();
        fentry_refused = fentry_refused.substr(fentry_refused.find("fentry: "));
        fentry_refused.pop_back(); // the closing parenthesis
    }
    if (forced) {
        const ProbeStatus* st = findStatus(*forced, "syscall:semtimedop");
        ASSERT_NE(st, nullptr);
        if (st->attached) {
            EXPECT_EQ(st->hook, "fentry");
            EXPECT_TRUE(contains(st->target, "sys_semtimedop")) << st->target;
            const SemopTally before = semopTally(forced->snapshot());
            failingSemops(300);
            const SemopTally after = semopTally(forced->snapshot());
            EXPECT_EQ(after.calls - before.calls, 300u);
            EXPECT_EQ(after.errors - before.errors, 300u);
        } else {
            EXPECT_TRUE(contains(st->reason, "fentry: ")) << st->reason;
            fentry_refused = st->reason;
        }
        forced.reset();
    }
    o.syscall_backend = Backend::Auto;
    auto s = Session::open(o);
    const ProbeStatus* st = findStatus(*s, "syscall:semtimedop");
    ASSERT_NE(st, nullptr);
    ASSERT_TRUE(st->attached) << st->reason;
    if (fentry_refused.empty()) {
        EXPECT_EQ(st->hook, "fentry");
    } else {
        EXPECT_NE(st->hook, "fentry");
        EXPECT_TRUE(contains(st->reason, fentry_refused)) << "fell back without saying why: " << st->reason;
        std::printf("syscall probe: fentry refused here (%s); attached via %s\n", fentry_refused.c_str(),
                    st->hook.c_str());
    }
    failingSemops(50);
    EXPECT_EQ(semopTally(s->snapshot()).errors, 50u);

}

// The comm filter is checked on every call (a thread may rename itself).
TEST(Session, SyscallLatencyFollowsTheCommFilter)
{
    LOCKSCOPE_REQUIRE_ROOT();
    char comm[16] = {};
    ASSERT_EQ(pthread_getname_np(pthread_self(), comm, sizeof(comm)), 0);
    Options o = quietOptions();
    o.syscalls = true;
    o.comm = comm;
    auto s = Session::open(o);
    const SemopTally before = semopTally(s->snapshot());
    failingSemops(100);
    const SemopTally named = semopTally(s->snapshot());
    EXPECT_EQ(named.errors - before.errors, 100u);

    ASSERT_EQ(pthread_setname_np(pthread_self(), "ls-other-name"), 0);
    failingSemops(100);
    const SemopTally renamed = semopTally(s->snapshot());
    ASSERT_EQ(pthread_setname_np(pthread_self(), comm), 0);
    EXPECT_EQ(renamed.errors, named.errors) << "calls under another comm were counted";
    EXPECT_EQ(renamed.calls, named.calls);
}

TEST(Session, CpuSamplingSeesKernelStacks)
{
    LOCKSCOPE_REQUIRE_ROOT();
    Options o = quietOptions();
    o.cpu_frequency_hz = 997;
    auto s = Session::open(o);
    Snapshot snap;
    bool kernel = false;
    // Spend time in the kernel until samples land there (bounded rounds, no clock).
    for (int round = 0; round < 20 && !kernel; ++round) {
        test::semopContention(2, 20000);
        snap = s->snapshot();
        kernel = std::any_of(
            snap.cpu.begin(), snap.cpu.end(), [](const CpuRecord& r) { return r.kstack_id >= 0; });
    }
    EXPECT_GT(snap.cpu_samples, 0u);
    ASSERT_TRUE(kernel) << "no kernel-mode sample after 20 rounds of syscalls";
    uint64_t sum = 0;
    for (const CpuRecord& r : snap.cpu) {
        sum += r.count;
        if (r.kstack_id >= 0) {
            EXPECT_FALSE(s->kernelStack(r.kstack_id).empty());
            // Its own stack map, so its many stacks leave the contention stacks' buckets alone.
            EXPECT_EQ(r.kstack_id >> LS_STACK_TAG_SHIFT, LS_STACKS_CPU) << r.kstack_id;
        }
    }
    EXPECT_LE(sum, s->snapshot().cpu_samples) << "every sample is counted once";
}

// Samples that interrupt user code have no kernel stack and are counted as
// user time, not sent into a kernel stack walk that fails: a user-mode spin
// must leave the count of samples without their stack near zero.
TEST(Session, CpuSamplesInUserModeAreNotStackFailures)
{
    LOCKSCOPE_REQUIRE_ROOT();
    Options o = quietOptions();
    o.cpu_frequency_hz = 997;
    auto s = Session::open(o);
    volatile uint64_t sink = 0;
    Snapshot snap;
    // Spin in user mode until a few hundred samples exist (bounded, no clock).
    for (int round = 0; round < 400 && snap.cpu_samples < 300; ++round) {
        for (uint64_t i = 0; i < 2'000'000; ++i)
            sink = sink + i;
        snap = s->snapshot();
    }
    ASSERT_GE(snap.cpu_samples, 100u) << "the CPU sampler saw almost nothing";
    uint64_t user = 0;
    for (const CpuRecord& r : snap.cpu)
        if (r.kstack_id < 0)
            user += r.count;
    EXPECT_GE(user * 4, snap.cpu_samples) << "a user-mode spin on one of the CPUs, yet few user samples";
    EXPECT_LE(snap.stats.cpu_unstacked * 20, snap.cpu_samples)
        << snap.stats.cpu_unstacked << " of " << snap.cpu_samples << " samples lost their stack";
}

TEST(Session, UserLocksMeasureWaitAndHoldOfPthreadMutexes)
{
    LOCKSCOPE_REQUIRE_ROOT();
    Options o = quietOptions();
    o.user_locks = defaultUserLocks();
    auto s = Session::open(o);
    const ProbeStatus* st = findStatus(*s, "user_lock:pthread_mutex_lock");
    ASSERT_NE(st, nullptr);
    ASSERT_TRUE(st->attached) << st->reason;

    pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
    constexpr int kThreads = 3, kIters = 2000;
    std::vector<std::thread> pool;
    for (int t = 0; t < kThreads; ++t)
        pool.emplace_back([&] {
            for (int i = 0; i < kIters; ++i) {
                pthread_mutex_lock(&m);
                pthread_mutex_unlock(&m);
            }
        });
    for (auto& th : pool)
        th.join();

    const Snapshot snap = s->snapshot();
    const uint64_t addr = reinterpret_cast<uint64_t>(&m);
    uint64_t waits = 0, holds = 0;
    for (const LockRecord& r : snap.user_waits)
        if (r.lock_addr == addr) {
            waits += r.hist.count();
            EXPECT_EQ(r.type, "pthread-mutex");
        }

    for (const LockRecord& r : snap.user_holds)
        if (r.lock_addr == addr) {
            holds += r.hist.count();
            EXPECT_TRUE(r.hist.consistent());
            if (r.ustack_id >= 0) {
                EXPECT_FALSE(s->userStack(r.ustack_id, static_cast<uint32_t>(getpid())).empty());
            }
        }
    EXPECT_EQ(waits, uint64_t { kThreads * kIters });
    EXPECT_EQ(holds, uint64_t { kThreads * kIters });
}

TEST(Session, ForkedChildrenJoinTheFilter)
{
    LOCKSCOPE_REQUIRE_ROOT();
    Options o = quietOptions();
    o.syscalls = true;
    o.per_tgid = true;
    auto s = Session::open(o);
    ASSERT_TRUE(findStatus(*s, "fork_follow")->attached);
    const pid_t child = fork();
    ASSERT_GE(child, 0);
    if (child == 0) {
        test::timerCalls(500);
        _exit(0);
    }
    int status = 0;
    waitpid(child, &status, 0);
    ASSERT_TRUE(WIFEXITED(status));
    // The parent made no timer calls after open(): any count is the child's.
    const Snapshot snap = s->snapshot();
    auto it = std::find_if(snap.latencies.begin(), snap.latencies.end(),
        [](const LatencyRecord& r) { return r.name == "timer_gettime"; });
    ASSERT_NE(it, snap.latencies.end());
    EXPECT_GE(it->hist.count(), 500u);
}

TEST(Session, WithoutPrivilegeOpenFailsWithOneClearLine)
{
    LOCKSCOPE_REQUIRE_ROOT(); // needs root to drop to an unprivileged user
    int pipefd[2];
    ASSERT_EQ(pipe(pipefd), 0);
    const pid_t child = fork();
    ASSERT_GE(child, 0);
    if (child == 0) {
        close(pipefd[0]);
        if (setgid(65534) != 0 || setuid(65534) != 0)
            _exit(3);
        try {
            Session::open(Options {});
            _exit(2);
        } catch (const ProbeError& e) {
            const std::string msg = e.what();
            if (write(pipefd[1], msg.data(), msg.size()) < 0)
                _exit(4);
            _exit(0);
        }
    }
    close(pipefd[1]);
    std::string msg;
    char buf[256];
    for (ssize_t n; (n = read(pipefd[0], buf, sizeof buf)) > 0;)
        msg.append(buf, static_cast<size_t>(n));
    close(pipefd[0]);
    int status = 0;
    waitpid(child, &status, 0);
    ASSERT_TRUE(WIFEXITED(status));
    ASSERT_EQ(WEXITSTATUS(status), 0) << "2: open() succeeded unprivileged; 3: could not drop privileges";
    EXPECT_TRUE(contains(msg, "root or CAP_BPF+CAP_PERFMON")) << msg;
    EXPECT_EQ(msg.find('\n'), std::string::npos) << "one line";
}

} // namespace
} // namespace lockscope::probes

// A wait the families could not place (no timed wait of its lock to follow)
// is lost; the session's own counters must add to that, not replace it.
TEST(SessionCounters, FamiliesLossesAddToTheCounters)
{
    lockscope::probes::Snapshot families, counters;
    families.stats.lost = 7;
    families.stats.events = 100;
    families.stats.waits_untimed = 5;
    counters.stats.lost = 3;
    counters.stats.events = 2;
    counters.stats.map_full = 4;
    counters.cpu_samples = 9;
    lockscope::probes::detail::addCounterStats(families, counters);
    EXPECT_EQ(families.stats.lost, 10u);
    EXPECT_EQ(families.stats.events, 102u);
    EXPECT_EQ(families.stats.map_full, 4u);
    EXPECT_EQ(families.stats.waits_untimed, 5u);
    EXPECT_EQ(families.cpu_samples, 9u);
}
