// SPDX-License-Identifier: GPL-2.0-or-later
// Checks on what the lab.guest_session fixture brought back from a stock
// Debian kernel booted under qemu. Missing results are failures: the fixture
// either ran or the boot failed (and printed why).
#include <algorithm>
#include <filesystem>
#include <iostream>
#include <map>

#include <gtest/gtest.h>
#include <unistd.h>
#include <nlohmann/json.hpp>

#include "lab_test_files.h"
#include "lockscope/capture/io.h"
#include "lockscope/lab/guest.h"
#include "lockscope/lab/process.h"

namespace fs = std::filesystem;
using namespace lockscope::lab;

namespace {

const fs::path kSession = LAB_SESSION_DIR;

using lab_test::slurp;

std::map<std::string, std::string> facts()
{
    return parseKeyValues(slurp(kSession / "facts.log"));
}

// The {"lockscope_result": {...}} line a workload printed.
nlohmann::json workloadResult(const std::string& log)
{
    auto at = log.find("{\"lockscope_result\"");
    if (at == std::string::npos)
        return {};
    auto end = log.find('\n', at);
    return nlohmann::json::parse(log.substr(at, end == std::string::npos ? std::string::npos : end - at))
        .at("lockscope_result");
}

bool sessionHasRecord()
{
    return slurp(kSession / "host.txt").find("record=yes") != std::string::npos;
}

#define REQUIRE_RECORD()                                                                                     \
    do {                                                                                                     \
        if (!fs::exists(kSession / "host.txt"))                                                              \
            FAIL() << "the guest session did not run (see lab.guest_session)";                               \
        if (!sessionHasRecord())                                                                             \
            GTEST_SKIP() << "this lockscope build has no `record` command (LOCKSCOPE_BUILD_BPF=OFF?)";        \
    } while (0)

lockscope::Capture guestCapture(const std::string& step)
{
    auto path = kSession / (step + ".lockscope.json");
    if (!fs::exists(path))
        throw std::runtime_error("the guest brought back no " + path.filename().string() + "; record said:\n" +
                                 tailLines(slurp(kSession / (step + ".log")), 15));
    return lockscope::readCapture(path.string());
}

const lockscope::ProbeStatus* probe(const lockscope::Capture& c, const std::string& name)
{
    for (const auto& p : c.probes)
        if (p.name == name)
            return &p;
    return nullptr;
}

uint64_t holdEvents(const lockscope::Capture& c)
{
    uint64_t n = 0;
    for (const auto& l : c.locks)
        n += l.hold.count();
    return n;
}

uint64_t latencyCount(const std::vector<lockscope::LatencyEntry>& entries, const std::string& name)
{
    for (const auto& e : entries)
        if (e.name == name)
            return e.latency.count();
    return 0;
}

// glibc's semop() may enter the kernel as semop or as semtimedop (Debian 12's
// does the latter, and the syscall probe names calls by number).
uint64_t semCalls(const lockscope::Capture& c)
{
    return latencyCount(c.syscalls, "semop") + latencyCount(c.syscalls, "semtimedop");
}

bool mentionsSemCode(const lockscope::Capture& c, const lockscope::Lock& l)
{
    if (l.key.find("sem") != std::string::npos)
        return true;
    for (const auto& site : l.sites)
        if (const auto* st = c.findStack(site.stack_id))
            for (const auto& f : st->frames)
                if (f.function.str().find("sem") != std::string::npos)
                    return true;
    return false;
}

void expectHoldProbeVia(const std::string& step, const std::string& hook)
{
    auto c = guestCapture(step);
    const auto* hold = probe(c, "spin_hold");
    ASSERT_NE(hold, nullptr) << step << ": no spin_hold probe status";
    EXPECT_TRUE(hold->attached) << step << ": spin_hold skipped: " << hold->reason;
    EXPECT_EQ(hold->hook, hook) << step << ": " << hold->reason;
    EXPECT_GT(holdEvents(c), 0u) << step << ": hold histograms are empty";
    bool sem_hold = false;
    for (const auto& l : c.locks)
        sem_hold |= l.hold.count() > 0 && mentionsSemCode(c, l);
    EXPECT_TRUE(sem_hold) << step << ": no held lock from the semaphore code on a semop workload";
    // With fexit on _raw_spin_lock its caller is reached through a BPF
    // trampoline; the lock is still keyed by the caller, not by an address.
    for (const auto& l : c.locks)
        EXPECT_EQ(l.key.find("@0x"), std::string::npos) << step << ": lock keyed by an unnamed frame: " << l.key;
    ASSERT_TRUE(c.workload.exit_status.has_value());
    EXPECT_EQ(*c.workload.exit_status, 0);
    EXPECT_EQ(semCalls(c), 8000u) << "2 threads x 2000 x (down, up)";
}

} // namespace

TEST(KernelGuest, BootsAStockKernelWithBtf)
{
    ASSERT_TRUE(fs::exists(kSession / "facts.log")) << "the guest session brought back no facts: see its output";
    auto f = facts();
    EXPECT_EQ(f["release"].rfind("6.1.", 0), 0u) << "release " << f["release"];
    EXPECT_EQ(f["machine"], "x86_64");
    EXPECT_EQ(f["cpus"], "2");
    EXPECT_EQ(f["btf"], "yes") << "Debian kernels carry /sys/kernel/btf/vmlinux";
    EXPECT_EQ(f["tp_contention"], "yes") << "lock:contention_begin tracepoint missing";
    EXPECT_EQ(f["kprobes"], "yes");
}

TEST(KernelGuest, ProbeTargetsExistInTheGuestKallsyms)
{
    auto f = facts();
    ASSERT_FALSE(f.empty());
    for (const char* s : {"_raw_spin_lock", "_raw_spin_unlock", "__lock_timer", "do_semtimedop"})
        EXPECT_EQ(f[std::string("sym.") + s], "yes") << s << " not in the guest's kallsyms";
}

TEST(KernelGuest, BinaryFilesSurviveTheSerialChannel)
{
    auto received = slurp(kSession / "transfer.bin");
    auto original = slurp(LAB_WORKLOAD);
    ASSERT_FALSE(original.empty());
    EXPECT_EQ(received.size(), original.size());
    EXPECT_TRUE(received == original) << "transfer.bin differs from " << LAB_WORKLOAD;
}

TEST(KernelGuest, WorkloadRunsWithExactCounts)
{
    auto r = workloadResult(slurp(kSession / "workload_timers.log"));
    ASSERT_TRUE(r.is_object()) << "no lockscope_result line in workload_timers.log";
    EXPECT_EQ(r["syscalls"].get<int>(), 10000);
    EXPECT_EQ(r["errors"].get<int>(), 0);
}

TEST(KernelGuest, HoldProbesAttachViaFentry)
{
    REQUIRE_RECORD();
    expectHoldProbeVia("rec_auto", "fentry");
}

TEST(KernelGuest, HoldProbesForcedToKprobesAttachViaKprobes)
{
    REQUIRE_RECORD();
    expectHoldProbeVia("rec_kprobe", "kprobe");
}

// lockscope agent --hold: its hold tables are drained every window (two
// halves, a grace period between), so the holds of the semaphore array's
// lock it served since start, under the key record gives it, match
// rec_auto's record --hold of the same workload in the same boot (not so
// the other locks the semaphore code takes, the run queues': the agent sees
// the whole system's holds, record the workload's); /metrics has the hold
// series and /debug/pprof/lock_hold a profile.
TEST(KernelGuest, AgentDrainsHoldsAndServesThem)
{
    REQUIRE_RECORD();
    const std::string log = slurp(kSession / "agent_hold.log");
    ASSERT_TRUE(fs::exists(kSession / "agent_hold_capture.json")) << "the agent said:\n" << tailLines(log, 15);
    const auto agent = lockscope::readCapture((kSession / "agent_hold_capture.json").string());
    const auto* hold = probe(agent, "spin_hold");
    ASSERT_NE(hold, nullptr);
    EXPECT_TRUE(hold->attached) << hold->reason;
    // The array's lock is keyed by its caller (__do_semtimedop, do_semtimedop).
    const auto arrayLock = [](const lockscope::Capture& c) {
        const lockscope::Lock* best = nullptr;
        for (const auto& l : c.locks)
            if (l.key.find("semtimedop") != std::string::npos && (!best || l.hold.count() > best->hold.count()))
                best = &l;
        return best;
    };
    const auto rec = guestCapture("rec_auto");
    const lockscope::Lock* recorded = arrayLock(rec);
    ASSERT_NE(recorded, nullptr) << "rec_auto has no hold of the semaphore array's lock";
    // A lock is named after its hottest walked caller. The path's stack
    // once found its bucket in the hold stack map held by a stack of an
    // earlier window, every walk of it failed, and the few walked holds of
    // semctl_down named the lock: such stacks are spilled now
    // (docs/agent.md, Limits), so the agent keys it as record does.
    const lockscope::Lock* served = nullptr;
    for (const auto& l : agent.locks)
        if (l.key == recorded->key)
            served = &l;
    ASSERT_NE(served, nullptr) << "the agent served no " << recorded->key << " (stack failures "
                               << agent.stats.stack_failures << ", collisions " << agent.stats.stack_collisions
                               << ", spilled " << agent.stats.stacks_spilled << ")";
    std::printf("%s holds: agent %llu (as %s), record %llu\n", recorded->key.c_str(),
                static_cast<unsigned long long>(served->hold.count()), served->key.c_str(),
                static_cast<unsigned long long>(recorded->hold.count()));
    EXPECT_NEAR(double(served->hold.count()), double(recorded->hold.count()), 0.01 * double(recorded->hold.count()))
        << "the same workload, drained per window: none lost or doubled";
    EXPECT_GT(agent.meta.duration_s, 2.0);
    const std::string metrics = slurp(kSession / "agent_hold_metrics.txt");
    for (const char* series : {"lockscope_lock_holds_total{", "lockscope_lock_hold_seconds_total{",
                               "lockscope_lock_hold_duration_seconds_bucket{"})
        EXPECT_NE(metrics.find(series), std::string::npos) << "no " << series << " series in /metrics";
    const std::string profile = slurp(kSession / "agent_hold_profile.pb.gz");
    ASSERT_GT(profile.size(), 100u) << "/debug/pprof/lock_hold served no profile";
    EXPECT_EQ(profile.substr(0, 2), std::string("\x1f\x8b")) << "not gzip";
}

// The agent's syscall and function halves, drained every window while the
// timers workload ran: the same exact counts as rec_timers (the guest runs
// nothing else that calls them).
TEST(KernelGuest, AgentDrainsSyscallsAndFunctionsExactly)
{
    REQUIRE_RECORD();
    const std::string log = slurp(kSession / "agent_hold.log");
    ASSERT_TRUE(fs::exists(kSession / "agent_hold_capture.json")) << "the agent said:\n" << tailLines(log, 15);
    const auto agent = lockscope::readCapture((kSession / "agent_hold_capture.json").string());
    const auto* lt = probe(agent, "function:__lock_timer");
    ASSERT_NE(lt, nullptr);
    EXPECT_TRUE(lt->attached) << lt->reason;
    EXPECT_EQ(latencyCount(agent.functions, "__lock_timer"), 4001u);
    EXPECT_EQ(latencyCount(agent.syscalls, "timer_gettime"), 4000u);
    EXPECT_EQ(latencyCount(agent.syscalls, "timer_delete"), 1u);
    const std::string metrics = slurp(kSession / "agent_hold_metrics.txt");
    for (const char* series : {"lockscope_syscall_calls_total{syscall=\"timer_gettime\"} 4000\n",
                               "lockscope_function_calls_total{function=\"__lock_timer\"} 4001\n"})
        EXPECT_NE(metrics.find(series), std::string::npos) << "no " << series << " in /metrics";
}

// --per-cgroup on the kernel hold probe: the semaphore workload ran in two
// cgroups the guest step made; each group's spinlock holds from the
// semaphore code are filed under it, and no hold is left without a group.
TEST(KernelGuest, PerCgroupSplitsKernelHoldsByGroup)
{
    REQUIRE_RECORD();
    if (slurp(kSession / "rec_cgroups.log").find("no cgroup v2") != std::string::npos)
        GTEST_SKIP() << "skipped: the guest kernel has no cgroup v2";
    auto c = guestCapture("rec_cgroups");
    std::map<std::string, uint64_t> semHolds, holds;
    for (const auto& l : c.locks) {
        holds[l.cgroup] += l.hold.count();
        if (mentionsSemCode(c, l))
            semHolds[l.cgroup] += l.hold.count();
    }
    EXPECT_GT(semHolds["/ls-a"], 0u) << "no semaphore-code holds in /ls-a";
    EXPECT_GT(semHolds["/ls-b"], 0u) << "no semaphore-code holds in /ls-b";
    EXPECT_EQ(holds[""], 0u) << "holds without a cgroup in a per-cgroup capture";
    for (const auto& l : c.locks) {
        if (l.hold.count() > 0 && !l.cgroup.empty()) {
            EXPECT_NE(l.key.find("#" + l.cgroup), std::string::npos) << l.key;
        }
    }
}

TEST(KernelGuest, FunctionProbesAttachWhereTheSymbolExistsAndSayWhyNot)
{
    REQUIRE_RECORD();
    auto f = facts();
    auto c = guestCapture("rec_timers");
    unsigned seen = 0;
    for (const auto& p : c.probes) {
        if (p.name.rfind("function:", 0) != 0)
            continue;
        ++seen;
        auto present = f["sym." + p.target];
        if (present == "yes") {
            EXPECT_TRUE(p.attached) << p.name << " exists in the guest but was skipped: " << p.reason;
            EXPECT_TRUE(p.hook == "fentry" || p.hook == "kprobe") << p.name << " via '" << p.hook << "'";
        } else if (present == "no") {
            EXPECT_FALSE(p.attached) << p.name << " attached although kallsyms lacks it";
            EXPECT_FALSE(p.reason.empty()) << p.name << " skipped without a reason";
        }
    }
    EXPECT_GE(seen, 2u) << "no function probe statuses in the capture";
    const auto* lt = probe(c, "function:__lock_timer");
    ASSERT_NE(lt, nullptr);
    EXPECT_TRUE(lt->attached) << lt->reason;
    // 2 threads x 2000 timer_gettime, plus the timer_delete lookup.
    EXPECT_EQ(latencyCount(c.functions, "__lock_timer"), 4001u);
    EXPECT_EQ(latencyCount(c.syscalls, "timer_gettime"), 4000u);
    EXPECT_EQ(latencyCount(c.syscalls, "timer_delete"), 1u);
}

// Stock kernels allow fentry: the syscall probe hooks only the syscall
// functions instead of raw_syscalls (this host refuses fentry and falls back).
TEST(KernelGuest, SyscallLatencyAttachesViaFentryAndSamplesPerThread)
{
    REQUIRE_RECORD();
    auto c = guestCapture("rec_auto");
    const auto* st = probe(c, "syscall:semtimedop");
    ASSERT_NE(st, nullptr);
    EXPECT_TRUE(st->attached) << st->reason;
    EXPECT_EQ(st->hook, "fentry") << st->reason;
    EXPECT_NE(st->target.find("sys_semtimedop"), std::string::npos) << st->target;
    EXPECT_EQ(semCalls(c), 8000u) << "every call timed once through fentry/fexit";

    auto s = guestCapture("rec_sc_sample");
    uint64_t timed = 0, calls = 0;
    for (const auto& e : s.syscalls)
        if (e.name == "semop" || e.name == "semtimedop") {
            EXPECT_EQ(e.sample_period, 4u) << e.name;
            timed += e.latency.count();
            calls += e.calls();
        }
    EXPECT_EQ(calls, 8000u) << "sampled-out calls must still be counted";
    EXPECT_EQ(timed, 2000u) << "2 threads x 4000 calls, each timing its calls 0, 4, 8, ...";
}

// --holder-stacks on a kernel that allows the hold probe (fentry here): the
// holder scan passes the 6.1 verifier and attaches, every contended spinlock
// wait is either attributed or counted as holder_not_found, and attributed
// holders of the semaphore lock are kernel stacks through the semaphore code.
TEST(KernelGuest, HolderStacksAttachAndAccountForEverySpinlockWait)
{
    REQUIRE_RECORD();
    if (!fs::exists(kSession / "rec_holders.log"))
        GTEST_SKIP() << "skipped: the guest session ran without --semop-multi (no samples build), "
                        "so no holder-stacks recording";
    auto c = guestCapture("rec_holders");
    const auto* hs = probe(c, "holder_stacks");
    ASSERT_NE(hs, nullptr) << "no holder_stacks probe status";
    ASSERT_TRUE(hs->attached) << hs->reason;
    EXPECT_EQ(hs->hook, "fentry");
    ASSERT_TRUE(c.workload.exit_status.has_value());
    EXPECT_EQ(*c.workload.exit_status, 0);
    uint64_t spinWaits = 0, attributed = 0;
    bool holderInSemCode = false;
    for (const auto& l : c.locks) {
        if (l.type == "spinlock")
            spinWaits += l.wait.count();
        for (const auto& site : l.sites)
            for (const auto& h : site.holders) {
                attributed += h.count;
                const auto* st = c.findStack(h.stack_id);
                ASSERT_NE(st, nullptr);
                EXPECT_EQ(st->kind, lockscope::StackKind::Kernel);
                if (mentionsSemCode(c, l))
                    for (const auto& f : st->frames)
                        holderInSemCode |= f.function.str().find("sem") != std::string::npos;
            }
    }
    // Every recorded spinlock wait was scanned when it began.
    EXPECT_GE(attributed + c.stats.holder_not_found, spinWaits);
    if (attributed == 0)
        GTEST_SKIP() << "skipped: no holder to check: " << spinWaits << " contended spinlock waits, "
                     << c.stats.holder_not_found << " scans found no holder. Under single-threaded TCG the guest "
                     << "sees (almost) no spinlock contention; see docs/kernel-lab.md, holder stacks";
    EXPECT_TRUE(holderInSemCode) << "attributed holders, but none of the semaphore lock's pass through ipc/sem.c";
}

// On this 6.1 kernel BPF maps still lock with plain spinlocks, and the hold
// probe sees every one our own programs take (htab buckets, freelists). Those
// are the probes' doing: left out and counted, under either hold backend. A
// BPF frame may remain only past an interrupt entry (an irq that arrived
// while one of our programs ran, and then contended for real). With hash
// maps gone from the hot paths they are a handful per run, and known as ours
// only by a walked stack: under the stack budget the few there are may all go
// unwalked (0 in 3 of 3 lab runs), with every stack walked there was 1 in 3
// of 3. rec_kprobe walks every stack.
TEST(KernelGuest, LocksOurOwnProgramsTakeAreLeftOutAndCounted)
{
    REQUIRE_RECORD();
    for (const char* step : {"rec_auto", "rec_kprobe"}) {
        auto c = guestCapture(step);
        for (const auto& l : c.locks)
            for (const auto& site : l.sites) {
                const auto* st = c.findStack(site.stack_id);
                ASSERT_TRUE(st);
                for (const auto& f : st->frames) {
                    if (f.function.str().rfind("asm_", 0) == 0)
                        break;
                    // A traced function's trampoline (--syscalls' fexit) is on
                    // the path of every lock that function takes: the function
                    // took it, not a program.
                    if (f.function.str().rfind("bpf_trampoline_", 0) == 0)
                        continue;
                    EXPECT_NE(f.module, "bpf") << step << ": " << l.key << " was taken inside " << f.function;
                }
            }
    }
    EXPECT_GT(guestCapture("rec_kprobe").stats.own_lock_events, 0u)
        << "every stack walked, the hold probe saw no lock taken by our programs";
}

TEST(KernelGuest, RecursionMissesAndDropsAreReportedNotHidden)
{
    REQUIRE_RECORD();
    auto c = guestCapture("rec_auto");
    // Unlocks of locks taken before the probes attached are counted apart.
    EXPECT_GT(c.stats.events, 0u);
    EXPECT_LT(c.stats.recursion_misses, c.stats.events / 10 + 100)
        << "hold probes re-entered themselves: a map with its own spinlock inside _raw_spin_lock?";
}

TEST(KernelGuest, WaitCaptureAgreesWithTheHostPath)
{
    REQUIRE_RECORD();
    if (::geteuid() != 0)
        GTEST_SKIP() << "recording on the host needs root (the guest half ran)";
    auto guest = guestCapture("rec_auto");
    auto host_path = kSession / "host_rec_auto.lockscope.json";
    // This host refuses fentry: --syscalls times them on raw_tp, as the guest does on fentry.
    auto r = runProcess({LOCKSCOPE_BIN, "record", "-o", host_path.string(), "--no-cpu", "--no-hold",
                         "--syscalls", "--",
                         LAB_WORKLOAD, "sem", "--threads", "2", "--ops", "2000"},
                        180);
    ASSERT_TRUE(r.ok()) << "host record failed:\n" << tailLines(r.output, 15);
    auto host = lockscope::readCapture(host_path.string());
    const auto* gw = probe(guest, "lock_contention");
    const auto* hw = probe(host, "lock_contention");
    ASSERT_TRUE(gw && hw);
    EXPECT_TRUE(gw->attached) << gw->reason;
    EXPECT_TRUE(hw->attached) << hw->reason;
    // Same workload, same counts through the same syscall probes on both kernels.
    EXPECT_EQ(semCalls(guest), semCalls(host));
    EXPECT_EQ(semCalls(host), 8000u);
    for (const auto* c : {&guest, &host}) {
        const auto& res = c->workload.results;
        EXPECT_EQ(res.value("syscalls", 0), 8000) << c->meta.kernel_release << ": " << res.dump();
    }
    // Contention itself depends on scheduling (TCG vs 2 real CPUs); what must
    // agree is its shape: every wait histogram is a proper distribution whose
    // count matches its sites, in both captures.
    for (const auto* c : {&guest, &host}) {
        for (const auto& l : c->locks) {
            uint64_t sites = 0;
            for (const auto& s : l.sites)
                sites += s.wait.count();
            EXPECT_EQ(sites, l.wait.count()) << l.key;
            if (l.wait.count() > 0) {
                EXPECT_LE(l.wait.min(), l.wait.max()) << l.key;
            }
        }
    }
    std::cout << "guest (" << guest.meta.kernel_release << ") and host (" << host.meta.kernel_release
              << ") contended locks:\n";
    for (const auto* c : {&guest, &host}) {
        for (const auto& l : c->locks) {
            if (l.wait.count() > 0)
                std::cout << "  " << c->meta.kernel_release << "  " << l.key << "  " << l.wait.count() << "\n";
        }
    }
}

TEST(KernelGuest, EveryBpfProgramLoadsOnTheGuestKernel)
{
    REQUIRE_RECORD();
    for (const char* obj : {"wait", "follow", "hold_fentry", "hold_kprobe", "syscalls", "cpu", "ulock"}) {
        auto log_path = kSession / (std::string("loadall_") + obj + ".log");
        ASSERT_TRUE(fs::exists(log_path)) << "the session did not load " << obj << " (built without BPF?)";
        auto log = slurp(log_path);
        auto kv = parseKeyValues(log);
        EXPECT_EQ(kv["loadall"], "ok") << obj << " was rejected by the guest kernel:\n" << tailLines(log, 25);
        EXPECT_FALSE(kv["pinned"].empty()) << obj << ": no program was loaded";
    }
}

namespace {
const lockscope::Lock* lockNamed(const lockscope::Capture& c, const std::string& name)
{
    for (const auto& l : c.locks)
        if (l.name == name && l.wait.count() > 0)
            return &l;
    return nullptr;
}

std::string lockList(const lockscope::Capture& c)
{
    std::string s;
    for (const auto& l : c.locks)
        s += "  " + l.key + " [" + l.name + "] " + l.type + " waits " + std::to_string(l.wait.count()) + "\n";
    return s;
}

#define REQUIRE_OWNER_WORKLOAD()                                                                             \
    do {                                                                                                     \
        REQUIRE_RECORD();                                                                                    \
        if (!fs::exists(kSession / "rec_names.log"))                                                         \
            GTEST_SKIP() << "skipped: the guest session ran without --owner-workload (built without BPF tests)"; \
    } while (0)
} // namespace

// A global mutex held on purpose (owner-workload rtnl: rtnl_mutex held across
// a faulting copy to user memory), on one vCPU: the stock kernel's kallsyms
// lists data symbols, so the mutex is keyed and named rtnl_mutex, the
// spinlock inside it (its wait_lock, taken by the waiter to queue) keeps its
// key rtnl_mutex+0x8 and is named rtnl_mutex beside it, and --lock-owner
// names the thread that held the mutex.
TEST(KernelGuest, AGlobalMutexIsNamedBySymbolBesideItsKey)
{
    REQUIRE_OWNER_WORKLOAD();
    auto c = guestCapture("rec_names");
    const auto result = workloadResult(slurp(kSession / "rec_names.log"));
    ASSERT_FALSE(result.is_null()) << tailLines(slurp(kSession / "rec_names.log"), 15);
    const auto* l = lockNamed(c, "rtnl_mutex");
    ASSERT_NE(l, nullptr) << "no contended lock named rtnl_mutex:\n" << lockList(c);
    EXPECT_EQ(l->type, "mutex");
    EXPECT_EQ(l->key, "rtnl_mutex") << "a global lock's key is its symbol";
    bool owner = false;
    for (const auto& s : l->sites)
        for (const auto& h : s.holders)
            owner |= h.owner_tid == result.at("owner_tid").get<uint32_t>() && h.owner_comm == "ls-owner";
    EXPECT_TRUE(owner) << "the waiter's owner is not the ls-owner thread " << result.dump();
    // Inside the symbol: the key keeps the offset, the name is the symbol.
    const lockscope::Lock* inner = nullptr;
    for (const auto& x : c.locks)
        if (x.key.rfind("rtnl_mutex+", 0) == 0)
            inner = &x;
    ASSERT_NE(inner, nullptr) << "no lock inside rtnl_mutex (its wait_lock's holds):\n" << lockList(c);
    EXPECT_EQ(inner->name, "rtnl_mutex");

    // The reports show the name beside the key.
    const auto path = (kSession / "rec_names.lockscope.json").string();
    auto md = runProcess({LOCKSCOPE_BIN, "report", path, "--format", "md"}, 60);
    ASSERT_TRUE(md.ok()) << md.output;
    EXPECT_NE(md.output.find("| `" + inner->key + "` `rtnl_mutex` | spinlock |"), std::string::npos) << md.output;
    auto text = runProcess({LOCKSCOPE_BIN, "report", path, "--format", "text", "--lock", "rtnl_mutex"}, 60);
    ASSERT_TRUE(text.ok()) << text.output;
    EXPECT_NE(text.output.find("=== " + inner->key + " (spinlock), name rtnl_mutex ==="), std::string::npos)
        << text.output;
}

// record --lock by the name alone keeps that lock and nothing else.
TEST(KernelGuest, LockFilterMatchesTheSymbolName)
{
    REQUIRE_OWNER_WORKLOAD();
    auto c = guestCapture("rec_names_lock");
    ASSERT_NE(lockNamed(c, "rtnl_mutex"), nullptr) << lockList(c);
    for (const auto& l : c.locks)
        EXPECT_EQ(l.name, "rtnl_mutex") << "--lock rtnl_mutex kept " << l.key << " [" << l.name << "]";
}
