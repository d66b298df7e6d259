// SPDX-License-Identifier: GPL-2.0-or-later
// `lockscope record` end to end for the target and user-space options: --comm
// with two contending processes at once, --user-locks / --user-lock uprobes on
// a workload with real mutex contention, and --user-stacks symbolized through
// libbcc to the workload's own functions.
#include <gtest/gtest.h>

#include <chrono>
#include <csignal>
#include <filesystem>
#include <set>
#include <thread>
#include <unistd.h>

#include "lockscope/capture/io.h"
#include "run_process.h"
#include "spin_contention.h"

using namespace record_test;
using lockscope::Capture;

namespace {

const std::string kBin = LOCKSCOPE_BIN;
const std::string kSemop = SEMOP_MULTI_BIN;
const std::string kContend = CONTEND_BIN;
const std::string kOwnerWorkload = OWNER_WORKLOAD_BIN;

class RecordE2e : public ::testing::Test {
protected:
    void SetUp() override
    {
        if (geteuid() != 0)
            GTEST_SKIP() << "skipped: loading BPF programs needs root (CI runs these as root)";
        dir = tempDir();
    }
    // Records with `args`, then reads the capture; a failure says why.
    Capture record(std::vector<std::string> args, const std::string& tag, Exit* exitOut = nullptr)
    {
        std::string cap = dir + "/" + tag + ".lockscope.json";
        std::vector<std::string> argv{kBin, "record", "-o", cap};
        argv.insert(argv.end(), args.begin(), args.end());
        Exit e = run(argv, dir, tag);
        if (exitOut)
            *exitOut = e;
        EXPECT_EQ(e.code, 0) << e.err;
        if (e.code != 0)
            return {};
        return lockscope::readCapture(cap);
    }
    std::string dir;
};

const lockscope::Lock* findLock(const Capture& c, const std::string& key)
{
    for (const auto& l : c.locks)
        if (l.key == key)
            return &l;
    return nullptr;
}

std::string lockKeys(const Capture& c)
{
    std::string s;
    for (const auto& l : c.locks)
        s += "  " + l.key + " (" + l.type + ", waits " + std::to_string(l.wait.count()) + ", holds " +
             std::to_string(l.hold.count()) + ")\n";
    return s.empty() ? "  (no locks)\n" : s;
}

std::string describe(const lockscope::Stack& s)
{
    std::string out;
    for (const auto& f : s.frames)
        out += "    " + (f.function.empty() ? std::string("?") : f.function.str()) + " [" + f.module.str() + "]\n";
    return out;
}

bool endsWith(const std::string& s, const std::string& tail)
{
    return s.size() >= tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
}

uint64_t reportedOps(const Capture& c)
{
    if (!c.workload.results.contains("ops"))
        return 0;
    return c.workload.results["ops"].get<uint64_t>();
}

// The user-lock assertions shared by the pthread and the named-function specs:
// one lock keyed by the workload's worker, every call of the worker seen.
void expectUserLock(const Capture& c, const std::string& type, const std::string& worker)
{
    const std::string key = type + "@" + worker;
    const lockscope::Lock* l = findLock(c, key);
    ASSERT_TRUE(l) << "no lock " << key << " in:\n" << lockKeys(c);
    EXPECT_EQ(l->type, type);
    ASSERT_FALSE(l->sites.empty());
    EXPECT_TRUE(l->wait.consistent());
    EXPECT_TRUE(l->hold.consistent());
    // The workload counts its lock/unlock cycles and every one of them runs
    // through the uprobes (they attach before the workload execs and detach
    // after it exits), so the counts are exact, not approximate.
    uint64_t ops = reportedOps(c);
    ASSERT_GT(ops, 0u) << c.workload.results.dump();
    EXPECT_EQ(l->wait.count(), ops);
    EXPECT_EQ(l->hold.count(), ops);
    EXPECT_GT(l->hold.total(), 0u);
    for (const auto& site : l->sites) {
        const auto* st = c.findStack(site.stack_id);
        ASSERT_TRUE(st);
        EXPECT_EQ(st->kind, lockscope::StackKind::User);
        ASSERT_FALSE(st->frames.empty());
        // The lock functions themselves are skipped: the caller comes first,
        // named by bcc from the workload binary's symbol table.
        EXPECT_EQ(st->frames[0].function, worker) << describe(*st);
        EXPECT_TRUE(endsWith(st->frames[0].module, "contend-workload")) << describe(*st);
    }
}

} // namespace

// Two copies of semop-multi contend at once under different command names;
// --comm names one. Per-tgid keying tells the processes apart in the capture:
// every lock must belong to the named one. (With the comm filter disabled in
// the probes, the other process's locks appear and this test fails.)
TEST_F(RecordE2e, CommFilterKeepsOnlyTheNamedProcess)
{
    const std::string wanted = dir + "/ls-comm-want", other = dir + "/ls-comm-other";
    std::filesystem::create_symlink(kSemop, wanted);
    std::filesystem::create_symlink(kSemop, other);
    // Long enough to outlive attaching the probes on a busy machine; they are
    // interrupted (and clean up their semaphore sets) once the recording ends.
    std::vector<std::string> w{"--multi", "--threads", "4", "--sems", "16", "--duration", "120"};
    std::vector<std::string> wa{wanted}, wb{other};
    wa.insert(wa.end(), w.begin(), w.end());
    wb.insert(wb.end(), w.begin(), w.end());
    Process a(wa, dir, "comm-want"), b(wb, dir, "comm-other");
    ASSERT_GT(a.pid(), 0);
    ASSERT_GT(b.pid(), 0);

    Exit e;
    // --syscalls: the syscall probe (off unless asked for), through raw_tp where fentry is refused.
    Capture c = record({"--comm", "ls-comm-want", "--per-tgid", "--no-cpu", "--syscalls", "-d", "2"},
        "comm", &e);
    a.signal(SIGINT);
    b.signal(SIGINT);
    Exit ea = a.wait(), eb = b.wait();
    EXPECT_EQ(ea.code, 0) << ea.err;
    EXPECT_EQ(eb.code, 0) << eb.err;
    if (HasFailure())
        return;

    EXPECT_EQ(c.meta.filters.at("comm"), "ls-comm-want");
    const std::string mine = "#" + std::to_string(a.pid()), theirs = "#" + std::to_string(b.pid());
    uint64_t wantedWaits = 0;
    for (const auto& l : c.locks) {
        EXPECT_TRUE(endsWith(l.key, mine)) << "lock of another process: " << l.key << "\n" << lockKeys(c);
        EXPECT_FALSE(endsWith(l.key, theirs)) << "the other workload leaked in: " << l.key;
        if (endsWith(l.key, mine))
            wantedWaits += l.wait.count();
    }
    // The syscall probe honours the filter too: semop calls were timed.
    uint64_t calls = 0;
    for (const auto& s : c.syscalls)
        if (s.name == "semtimedop" || s.name == "semop")
            calls += s.latency.count();
    EXPECT_GT(calls, 100u);
    // Four threads on one semaphore array contend hundreds of times a second
    // even on a loaded machine, where the kernel reports spinning waits.
    LOCKSCOPE_REQUIRE_SPIN_WAITS();
    EXPECT_GT(wantedWaits, 20u) << "the named process's contention is missing:\n" << lockKeys(c);
}

// A --comm that matches nothing running records nothing: the filter is not
// "any process" in disguise. Another process contends meanwhile.
TEST_F(RecordE2e, CommFilterMatchingNothingRecordsNoLocks)
{
    std::vector<std::string> w{kSemop, "--multi", "--threads", "4", "--sems", "16", "--duration", "120"};
    Process busy(w, dir, "comm-busy");
    ASSERT_GT(busy.pid(), 0);
    Capture c = record({"--comm", "ls-no-such-comm", "--no-cpu", "--syscalls", "-d", "2"}, "comm-none");
    busy.signal(SIGINT);
    Exit eb = busy.wait();
    EXPECT_EQ(eb.code, 0) << eb.err;
    if (HasFailure())
        return;
    EXPECT_TRUE(c.locks.empty()) << lockKeys(c);
    for (const auto& s : c.syscalls)
        EXPECT_EQ(s.latency.count(), 0u) << s.name;
    // The same recording without the filter does see the contention, so the
    // empty capture above is the filter's doing.
    LOCKSCOPE_REQUIRE_SPIN_WAITS();
    Process busy2(w, dir, "comm-busy2");
    Capture all = record({"-a", "--no-cpu", "-d", "2", "--stack-contains", "sem"}, "comm-all");
    busy2.signal(SIGINT);
    busy2.wait();
    EXPECT_FALSE(all.locks.empty()) << "semop-multi contention not seen system-wide";
}

TEST_F(RecordE2e, UserLocksPthreadMutex)
{
    Exit e;
    Capture c = record({"--user-locks", "--no-cpu", "--", kContend, "mutex", "4", "1"}, "ulock", &e);
    if (HasFailure())
        return;
    bool attached = false;
    for (const auto& p : c.probes)
        if (p.name == "user_lock:pthread_mutex_lock") {
            ASSERT_TRUE(p.attached) << p.reason;
            EXPECT_EQ(p.hook, "uprobe");
            attached = true;
        }
    ASSERT_TRUE(attached) << "no user_lock:pthread_mutex_lock probe in the capture";
    EXPECT_NE(e.err.find("user_lock:pthread_mutex_lock: attached via uprobe"), std::string::npos) << e.err;
    expectUserLock(c, "pthread-mutex", "ls_test_mutex_worker");
}

TEST_F(RecordE2e, UserLockSpecNamedFunctions)
{
    const std::string spec = kContend + ":ls_test_spin_lock:ls_test_spin_unlock:test-spin";
    Capture c = record({"--user-lock", spec, "--no-cpu", "--", kContend, "spin", "4", "1"}, "uspec");
    if (HasFailure())
        return;
    expectUserLock(c, "test-spin", "ls_test_spin_worker");
}

TEST_F(RecordE2e, UserLockSpecWithUnknownFunctionIsSkippedVisibly)
{
    Exit e;
    Capture c = record({"--user-lock", kContend + ":ls_no_such_lock:ls_test_spin_unlock", "--no-cpu", "--",
                        kContend, "spin", "2", "0.2"},
                       "ubad", &e);
    if (HasFailure())
        return;
    const lockscope::ProbeStatus* st = nullptr;
    for (const auto& p : c.probes)
        if (p.name == "user_lock:ls_no_such_lock")
            st = &p;
    ASSERT_TRUE(st) << e.err;
    EXPECT_FALSE(st->attached);
    EXPECT_NE(st->reason.find("ls_no_such_lock"), std::string::npos) << st->reason;
    EXPECT_NE(e.err.find("user_lock:ls_no_such_lock: skipped: "), std::string::npos) << e.err;
}

namespace {

// The pipe-mutex waits of owner-workload's waiter, each with its user stack
// named down to the waiter's own function.
void expectWaitsInTheWaiter(const Capture& c)
{
    uint64_t pipeWaits = 0, withUser = 0, inWaiter = 0;
    std::string seen;
    for (const auto& l : c.locks) {
        for (const auto& site : l.sites) {
            const auto* ks = c.findStack(site.stack_id);
            ASSERT_TRUE(ks);
            bool pipe = false;
            for (const auto& f : ks->frames)
                pipe |= f.function.str().find("pipe_write") != std::string::npos; // anon_pipe_write since 6.16
            if (!pipe)
                continue;
            pipeWaits += site.wait.count();
            if (!site.user_stack_id)
                continue;
            withUser += site.wait.count();
            const auto* us = c.findStack(*site.user_stack_id);
            ASSERT_TRUE(us);
            EXPECT_EQ(us->kind, lockscope::StackKind::User);
            seen += describe(*us) + "  --\n";
            // The syscall instruction is in the waiter's function: the innermost frame.
            if (!us->frames.empty() && us->frames[0].function == "ls_test_waiter_write" &&
                endsWith(us->frames[0].module, "owner-workload"))
                inWaiter += site.wait.count();
        }
    }
    ASSERT_GE(pipeWaits, 1u) << "the waiter's pipe-mutex wait was not recorded:\n" << lockKeys(c);
    // A wait in a user task inside a syscall has a user stack unless the
    // stack map was full (counted, never silent).
    EXPECT_GE(withUser + c.stats.stack_failures, pipeWaits);
    EXPECT_GT(withUser, 0u) << "stack failures " << c.stats.stack_failures;
    EXPECT_EQ(inWaiter, withUser) << "user stacks not symbolized to the waiter:\n" << seen;
}

} // namespace

// Kernel contention with the user stack of the same event: owner-workload
// makes one pipe-mutex wait on purpose (no timing, whatever the load), from
// the write in its own ls_test_waiter_write, then lingers until record's -d
// ends it: record reads a workload's symbols while it runs.
TEST_F(RecordE2e, UserStacksNameTheWorkloadFunction)
{
    Capture c = record({"--user-stacks", "--no-cpu", "--no-hold", "--no-syscalls", "-d", "1", "--", kOwnerWorkload,
                        "linger"},
                       "ustack");
    if (HasFailure())
        return;
    expectWaitsInTheWaiter(c);
}

// The same without "linger": owner-workload exits as soon as its wait is
// over, typically before record's first look at a running workload. Its
// symbols are read when it exits, while its memory map still exists.
TEST_F(RecordE2e, UserStacksOfAWorkloadThatExitsAtOnceAreNamed)
{
    Capture c = record({"--user-stacks", "--no-cpu", "--no-hold", "--no-syscalls", "--", kOwnerWorkload}, "ustack-short");
    if (HasFailure())
        return;
    expectWaitsInTheWaiter(c);
}

// Without --user-stacks no user stack is taken (the option is not always on).
TEST_F(RecordE2e, NoUserStacksUnlessAsked)
{
    Capture c = record({"--no-cpu", "--no-hold", "--no-syscalls", "--", kOwnerWorkload}, "nostack");
    if (HasFailure())
        return;
    ASSERT_FALSE(c.locks.empty()) << "owner-workload's pipe-mutex wait was not recorded";
    for (const auto& l : c.locks)
        for (const auto& site : l.sites)
            EXPECT_FALSE(site.user_stack_id) << l.key;
    for (const auto& s : c.stacks)
        EXPECT_EQ(s.kind, lockscope::StackKind::Kernel);
}

// User locks of a process found by --comm (not spawned by record): its stacks
// are symbolized in that process, not in record's "default" one.
TEST_F(RecordE2e, UserLocksOfACommTargetAreSymbolized)
{
    const std::string named = dir + "/ls-ulock-comm";
    std::filesystem::create_symlink(kContend, named);
    Process w({named, "mutex", "2", "120"}, dir, "ulock-comm-workload");
    ASSERT_GT(w.pid(), 0);
    Capture c = record({"--comm", "ls-ulock-comm", "--user-locks", "--no-cpu", "-d", "2"}, "ulock-comm");
    w.signal(SIGKILL);
    w.wait();
    if (HasFailure())
        return;
    const lockscope::Lock* l = findLock(c, "pthread-mutex@ls_test_mutex_worker");
    ASSERT_TRUE(l) << "user-lock stacks of the --comm process not symbolized:\n" << lockKeys(c);
    EXPECT_GT(l->wait.count(), 0u);
    EXPECT_GT(l->hold.count(), 0u);
}
