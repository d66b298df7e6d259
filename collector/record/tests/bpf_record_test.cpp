// SPDX-License-Identifier: GPL-2.0-or-later
// `lockscope record` end to end: real BPF programs on the running kernel, the
// samples' semop workload, and perf lock on the same run as the reference.
#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <filesystem>
#include <map>
#include <regex>
#include <thread>
#include <unistd.h>

#include "lockscope/capture/io.h"
#include "run_process.h"

using namespace record_test;
using lockscope::Capture;

namespace {

const std::string kBin = LOCKSCOPE_BIN;
const std::string kSemop = SEMOP_MULTI_BIN;

// A semaphore-array lock contended from many threads: --multi makes every
// call take the whole-array lock (sem_perm.lock) with nsops = 2.
std::vector<std::string> semopWorkload(const char* seconds)
{
    return {kSemop, "--multi", "--threads", "8", "--sems", "16", "--duration", seconds};
}

bool throughSemCode(const Capture& c, const lockscope::Lock& l)
{
    for (const auto& site : l.sites) {
        const auto* s = c.findStack(site.stack_id);
        if (!s)
            continue;
        for (const auto& f : s->frames)
            if (f.function.find("semtimedop") != std::string::npos || f.function.find("sem_lock") == 0 ||
                f.function.find("semop") != std::string::npos)
                return true;
    }
    return false;
}

const lockscope::ProbeStatus* probe(const Capture& c, const std::string& name)
{
    for (const auto& p : c.probes)
        if (p.name == name)
            return &p;
    return nullptr;
}

class RecordBpf : public ::testing::Test {
protected:
    void SetUp() override
    {
        if (geteuid() != 0)
            GTEST_SKIP() << "skipped: loading BPF programs needs root (CI runs these as root)";
        dir = tempDir();
    }
    std::string dir;
};

// One shared recording of the semop workload for the assertions below.
struct SemopRun {
    Exit exit;
    Capture capture;
    bool ok = false;
};

const SemopRun& semopRun()
{
    static SemopRun run = [] {
        SemopRun r;
        std::string dir = tempDir();
        std::string out = dir + "/semop.lockscope.json";
        std::vector<std::string> argv{kBin, "record", "-o", out, "--label", "test", "--"};
        auto w = semopWorkload("3");
        argv.insert(argv.end(), w.begin(), w.end());
        r.exit = record_test::run(argv, dir, "semop");
        if (r.exit.code == 0) {
            try {
                r.capture = lockscope::readCapture(out);
                r.ok = true;
            } catch (const std::exception& e) {
                r.exit.err += std::string("\nreadCapture: ") + e.what();
            }
        }
        return r;
    }();
    return run;
}

} // namespace

TEST_F(RecordBpf, SemopWorkloadLocksStacksAndHistograms)
{
    const auto& r = semopRun();
    ASSERT_TRUE(r.ok) << "exit " << r.exit.code << ": " << r.exit.err;
    const Capture& c = r.capture;
    // The per-probe lines printed at start are the ones recorded.
    const auto* wait = probe(c, "lock_contention");
    ASSERT_TRUE(wait) << r.exit.err;
    ASSERT_TRUE(wait->attached) << wait->reason;
    EXPECT_NE(r.exit.err.find("lock_contention: attached via " + wait->hook), std::string::npos) << r.exit.err;
    EXPECT_NE(r.exit.err.find("capture written to"), std::string::npos) << r.exit.err;

    const lockscope::Lock* sem = nullptr;
    for (const auto& l : c.locks)
        if (throughSemCode(c, l) && (!sem || l.wait.count() > sem->wait.count()))
            sem = &l;
    ASSERT_TRUE(sem) << "no lock whose stacks pass through the semaphore code";
    EXPECT_EQ(sem->type, "spinlock");
    EXPECT_GT(sem->wait.count(), 100u);
    EXPECT_TRUE(sem->wait.consistent());
    EXPECT_GT(sem->wait.total(), 0u);
    EXPECT_GE(sem->wait.max(), sem->wait.min());
    EXPECT_EQ(sem->key.find("spinlock@"), 0u) << sem->key;
    uint64_t siteCount = 0;
    for (const auto& s : sem->sites) {
        siteCount += s.wait.count();
        const auto* st = c.findStack(s.stack_id);
        ASSERT_TRUE(st);
        ASSERT_FALSE(st->frames.empty());
        // The caller, not the lock machinery, is the first frame.
        EXPECT_EQ(st->frames[0].function.find("_raw_spin"), std::string::npos) << st->frames[0].function;
        EXPECT_EQ(st->frames[0].function.find("queued_spin"), std::string::npos) << st->frames[0].function;
        EXPECT_LE(st->frames.size(), 16u);
    }
    EXPECT_EQ(siteCount, sem->wait.count());

    EXPECT_EQ(c.meta.label, "test");
    EXPECT_FALSE(c.meta.kernel_release.empty());
    EXPECT_GT(c.meta.duration_s, 1.0);
    EXPECT_EQ(c.workload.exit_status, 0);
    ASSERT_TRUE(c.workload.results.contains("ops_per_sec")) << c.workload.results.dump();
    EXPECT_GT(c.workload.results["ops_per_sec"].get<double>(), 0.0);
    EXPECT_NE(r.exit.out.find("lockscope_result"), std::string::npos) << "workload stdout not passed through";
}

TEST_F(RecordBpf, SemopSyscallLatency)
{
    const auto& r = semopRun();
    ASSERT_TRUE(r.ok) << r.exit.err;
    uint64_t calls = 0;
    for (const auto& s : r.capture.syscalls)
        if (s.name == "semtimedop" || s.name == "semop") {
            calls += s.latency.count();
            EXPECT_TRUE(s.latency.consistent());
        }
    EXPECT_GT(calls, 1000u) << "no semop/semtimedop latency recorded";
}

TEST_F(RecordBpf, SemopCpuShare)
{
    const auto& r = semopRun();
    ASSERT_TRUE(r.ok) << r.exit.err;
    const auto& cpu = r.capture.cpu;
    EXPECT_EQ(cpu.frequency_hz, 997u);
    EXPECT_GT(cpu.samples, 100u);
    ASSERT_FALSE(cpu.top_leaves.empty());
    // Eight threads fighting over one spinlock on two CPUs spin visibly.
    EXPECT_GT(cpu.lock_samples, 0u);
    EXPECT_LE(cpu.lock_samples, cpu.samples);
}

TEST_F(RecordBpf, HoldProbeOrVisibleSkip)
{
    const auto& r = semopRun();
    ASSERT_TRUE(r.ok) << r.exit.err;
    const auto* hold = probe(r.capture, "spin_hold");
    ASSERT_TRUE(hold) << "the hold probe is not listed in the capture";
    if (!hold->attached) {
        EXPECT_NE(r.exit.err.find("spin_hold: skipped: " + hold->reason), std::string::npos) << r.exit.err;
        GTEST_SKIP() << "skipped: " << hold->reason;
    }
    uint64_t holds = 0;
    for (const auto& l : r.capture.locks)
        holds += l.hold.count();
    EXPECT_GT(holds, 0u);
}

// perf lock record on the same run: lockscope follows perf and the workload
// perf spawns, so both observe exactly the same contention events. The
// tolerance is 10% (+20 events) per caller function: both count every
// contention_begin/end pair of the workload's tasks, but perf's ring buffer
// may lose events (it reports them) and a wait in flight when either side
// starts or stops is seen by one only; anything beyond that is a real
// disagreement about callers or counts.
TEST_F(RecordBpf, AgreesWithPerfLockPerCaller)
{
    if (access("/usr/bin/perf", X_OK) != 0)
        GTEST_SKIP() << "skipped: perf (linux-perf) is not installed";
    std::string cap = dir + "/both.lockscope.json", pdata = dir + "/perf.data";
    std::vector<std::string> argv{kBin, "record", "--no-cpu", "-o", cap, "--", "perf", "lock", "record",
                                  "-o", pdata, "--"};
    auto w = semopWorkload("2");
    argv.insert(argv.end(), w.begin(), w.end());
    Exit e = run(argv, dir, "both");
    ASSERT_EQ(e.code, 0) << e.err;
    Exit rep = run({"perf", "lock", "contention", "-i", pdata, "-E", "50", "-F", "contended,wait_total"}, dir,
                   "perfreport");
    ASSERT_EQ(rep.code, 0) << rep.err;

    // "     27269     83.63 ms     spinlock   do_semtimedop+0x16a"
    std::map<std::string, uint64_t> perfByCaller;
    std::regex line(R"(^\s*(\d+)\s+[\d.]+ \S+\s+(\S+)\s+([A-Za-z0-9_.]+)\+0x[0-9a-f]+\s*$)");
    std::stringstream ss(rep.out + "\n" + rep.err);  // perf 6.1 prints the table on stderr
    for (std::string l; std::getline(ss, l);) {
        std::smatch m;
        if (std::regex_match(l, m, line))
            perfByCaller[m[3].str()] += std::stoull(m[1].str());
    }
    ASSERT_FALSE(perfByCaller.empty()) << rep.out << rep.err;
    Capture c = lockscope::readCapture(cap);
    std::map<std::string, uint64_t> oursByCaller;
    for (const auto& l : c.locks)
        for (const auto& s : l.sites) {
            const auto* st = c.findStack(s.stack_id);
            if (st && !st->frames.empty())
                oursByCaller[st->frames[0].function] += s.wait.count();
        }

    uint64_t perfTotal = 0;
    for (auto& [k, n] : perfByCaller)
        perfTotal += n;
    size_t compared = 0;
    for (const auto& [caller, n] : perfByCaller) {
        if (n < 200)
            continue;  // too few events for a ratio to mean anything
        ++compared;
        uint64_t ours = oursByCaller.count(caller) ? oursByCaller[caller] : 0;
        double tol = 0.10 * double(std::max(n, ours)) + 20;
        std::fprintf(stderr, "caller %s: lockscope %llu, perf %llu contentions\n", caller.c_str(),
                     static_cast<unsigned long long>(ours), static_cast<unsigned long long>(n));
        EXPECT_LE(std::fabs(double(ours) - double(n)), tol)
            << caller << ": lockscope " << ours << " vs perf " << n << "\nperf:\n"
            << rep.out << rep.err;
    }
    EXPECT_GE(compared, 1u) << "perf saw no caller with >= 200 contentions:\n" << rep.out << rep.err;
    std::fprintf(stderr, "perf total %llu contentions over %zu callers\n",
                 static_cast<unsigned long long>(perfTotal), perfByCaller.size());
}

TEST_F(RecordBpf, SigintMidCaptureStillWritesCapture)
{
    std::string cap = dir + "/int.lockscope.json";
    std::vector<std::string> argv{kBin, "record", "--no-cpu", "-o", cap, "--"};
    auto w = semopWorkload("120");
    argv.insert(argv.end(), w.begin(), w.end());
    Process p(argv, dir, "sigint");
    // Wait until the probes are attached (the per-probe lines are printed),
    // then for a little contention before interrupting.
    for (int i = 0; i < 600 && p.errSoFar().find("lock_contention:") == std::string::npos; ++i)
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
    std::this_thread::sleep_for(std::chrono::milliseconds(1000));
    p.signal(SIGINT);
    Exit e = p.wait();
    ASSERT_EQ(e.code, 0) << e.err;
    Capture c = lockscope::readCapture(cap);
    EXPECT_LT(c.meta.duration_s, 100.0);
    // The workload got the interrupt forwarded and reported it.
    ASSERT_TRUE(c.workload.results.contains("interrupted")) << c.workload.results.dump();
    EXPECT_TRUE(c.workload.results["interrupted"].get<bool>());
    EXPECT_FALSE(c.locks.empty());
}

TEST_F(RecordBpf, CrashingWorkloadYieldsCaptureWithSignal)
{
    std::string cap = dir + "/crash.lockscope.json";
    Exit e = run({kBin, "record", "--no-cpu", "-o", cap, "--", "sh", "-c", "echo before; kill -SEGV $$"}, dir,
                 "crash");
    ASSERT_EQ(e.code, 0) << e.err;
    EXPECT_NE(e.err.find("killed by signal 11"), std::string::npos) << e.err;
    EXPECT_EQ(e.out, "before\n");
    Capture c = lockscope::readCapture(cap);
    ASSERT_TRUE(c.workload.signal);
    EXPECT_EQ(*c.workload.signal, SIGSEGV);
    EXPECT_FALSE(c.workload.exit_status);
    ASSERT_EQ(c.workload.command.size(), 3u);
    EXPECT_EQ(c.workload.command[0], "sh");
}

TEST_F(RecordBpf, MissingWorkloadIsOneLineExit1)
{
    std::string cap = dir + "/none.lockscope.json";
    Exit e = run({kBin, "record", "-o", cap, "--", "/nonexistent/workload"}, dir, "missing");
    EXPECT_EQ(e.code, 1) << e.err;
    EXPECT_EQ(lineCount(e.err), 1u) << e.err;
    EXPECT_NE(e.err.find("cannot run '/nonexistent/workload'"), std::string::npos) << e.err;
    EXPECT_FALSE(std::filesystem::exists(cap));
}

TEST_F(RecordBpf, SystemWideWithDuration)
{
    std::string cap = dir + "/all.lockscope.json";
    Exit e = run({kBin, "record", "-a", "-d", "1", "--no-cpu", "-o", cap}, dir, "all");
    ASSERT_EQ(e.code, 0) << e.err;
    Capture c = lockscope::readCapture(cap);
    EXPECT_GE(c.meta.duration_s, 0.9);
    EXPECT_EQ(c.meta.filters.at("all"), "true");
    EXPECT_FALSE(c.workload.exit_status);
}

TEST_F(RecordBpf, ExistingPidUntilItExits)
{
    // Long enough to outlive attaching the probes (several seconds on a busy machine).
    auto w = semopWorkload("10");
    Process workload(w, dir, "pidworkload");
    ASSERT_GT(workload.pid(), 0);
    std::string cap = dir + "/pid.lockscope.json";
    // No -d: the recording ends when the watched process does.
    Exit e = run({kBin, "record", "--no-cpu", "-p", std::to_string(workload.pid()), "-o", cap}, dir, "pid");
    ASSERT_EQ(e.code, 0) << e.err;
    Exit we = workload.wait();
    EXPECT_EQ(we.code, 0) << we.err;
    Capture c = lockscope::readCapture(cap);
    EXPECT_EQ(c.meta.filters.at("pid"), std::to_string(workload.pid()));
    EXPECT_LT(c.meta.duration_s, 60.0);
    bool sem = false;
    for (const auto& l : c.locks)
        sem |= throughSemCode(c, l) && l.wait.count() > 0;
    EXPECT_TRUE(sem) << "no semaphore-code contention seen for -p " << workload.pid();
}
