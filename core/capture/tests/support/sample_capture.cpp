// SPDX-License-Identifier: GPL-2.0-or-later
#include "sample_capture.h"

#include <array>
#include <string>
#include <utility>
#include <vector>

namespace lockscope::testing {

uint64_t Rng::next() noexcept
{
    uint64_t z = (state_ += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

void addSpread(Log2Hist& h, Rng& rng, uint64_t count, uint64_t median_ns, unsigned spread)
{
    if (count == 0)
        return;
    // 2^(q/4) in 1/1024ths: quarter-octave steps without floating point.
    static constexpr std::array<uint64_t, 4> kQuarter { 1024, 1218, 1448, 1722 };
    const uint64_t reps = count < 256 ? count : 256;
    for (uint64_t r = 0; r < reps; ++r) {
        // Sum of three uniforms: a bell shape over [-3*spread, 3*spread] quarter-octaves.
        int64_t q = 0;
        for (int k = 0; k < 3; ++k)
            q += static_cast<int64_t>(rng.below(2 * uint64_t { spread } + 1)) - static_cast<int64_t>(spread);
        const int64_t octaves = q >= 0 ? q / 4 : -((-q + 3) / 4);
        const auto frac = static_cast<size_t>(q - octaves * 4);
        uint64_t v = median_ns * kQuarter[frac] / 1024;
        v = octaves >= 0 ? (octaves < 20 ? v << octaves : v) : v >> (-octaves < 63 ? -octaves : 63);
        // Jitter inside the step so that values are not all on a grid.
        v += rng.below(v / 8 + 1);
        const uint64_t times = count / reps + (r < count % reps ? 1 : 0);
        h.add(v ? v : 1, times);
    }
}

namespace {

// Deterministic fake kernel text addresses, one per function name.
uint64_t kernelText(const std::string& function)
{
    uint64_t h = 1469598103934665603ull;
    for (char c : function)
        h = (h ^ static_cast<unsigned char>(c)) * 1099511628211ull;
    return 0xffffffff81000000ull + ((h % 0xe00000ull) & ~uint64_t { 0xf });
}

Frame kframe(const std::string& function, uint64_t offset)
{
    return Frame { function, offset, "", kernelText(function) + offset };
}

Frame uframe(const std::string& function, uint64_t offset, const std::string& module, uint64_t base)
{
    return Frame { function, offset, module, base + offset };
}

// Stack ids, as a recorder would hand them out (not dense on purpose).
enum : uint32_t {
    kSemopStack = 11,
    kSemtimedopStack = 12,
    kSemctlStack = 13,
    kRenameStack = 21,
    kTimerGetStack = 31,
    kTimerSetStack = 32,
    kIpcgetStack = 41,
    kCpuSemopStack = 51,
    kCpuIdleStack = 52,
    kUserSemopStack = 101,
};

std::vector<Frame> syscallTail(const std::string& sys, uint64_t off)
{
    return { kframe(sys, off), kframe("do_syscall_64", 0x82),
        kframe("entry_SYSCALL_64_after_hwframe", 0x76) };
}

Stack kstack(uint32_t id, std::vector<Frame> inner, const std::vector<Frame>& tail)
{
    inner.insert(inner.end(), tail.begin(), tail.end());
    return Stack { id, StackKind::Kernel, std::move(inner) };
}

std::vector<Stack> semopStacks(bool patched)
{
    const Frame slow = kframe("queued_spin_lock_slowpath", patched ? 0x1c4 : 0x1d4);
    const Frame spin = kframe("_raw_spin_lock", 0x2e);
    const Frame semLock = kframe("sem_lock", patched ? 0x5a : 0x9a);
    const Frame doSem = kframe("do_semtimedop", patched ? 0x2c9 : 0x2b1);
    std::vector<Stack> s;
    s.push_back(kstack(kSemopStack, { slow, spin, semLock, doSem }, syscallTail("__x64_sys_semop", 0x1c)));
    s.push_back(
        kstack(kSemtimedopStack, { slow, spin, semLock, doSem }, syscallTail("__x64_sys_semtimedop", 0x5c)));
    s.push_back(kstack(kSemctlStack,
        { slow, spin, semLock, kframe("semctl_main", 0x10f), kframe("ksys_semctl", 0x8d) },
        syscallTail("__x64_sys_semctl", 0x1a)));
    s.push_back(kstack(kRenameStack,
        { slow, spin, kframe("d_move", 0x2b), kframe("vfs_rename", 0x5e1), kframe("do_renameat2", 0x4f4) },
        syscallTail("__x64_sys_rename", 0x3f)));
    const Frame irq = kframe("_raw_spin_lock_irqsave", 0x3d);
    const Frame lockTimer = kframe("__lock_timer", 0x6e);
    s.push_back(kstack(kTimerGetStack, { slow, irq, lockTimer, kframe("do_timer_gettime", 0x2a) },
        syscallTail("__x64_sys_timer_gettime", 0x3b)));
    s.push_back(kstack(kTimerSetStack, { slow, irq, lockTimer, kframe("do_timer_settime", 0x7b) },
        syscallTail("__x64_sys_timer_settime", 0x61)));
    s.push_back(kstack(kIpcgetStack,
        { kframe("rwsem_down_write_slowpath", 0x2f1), kframe("down_write", 0x47), kframe("ipcget", 0x3e) },
        syscallTail("__x64_sys_semget", 0x2c)));
    s.push_back(kstack(kCpuSemopStack, { kframe("perform_atomic_semop", 0x8f), doSem },
        syscallTail("__x64_sys_semop", 0x1c)));
    s.push_back(Stack { kCpuIdleStack, StackKind::Kernel,
        { kframe("default_idle", 0xe), kframe("default_idle_call", 0x30), kframe("do_idle", 0x1fd),
            kframe("cpu_startup_entry", 0x1d), kframe("start_secondary", 0x119),
            kframe("common_startup_64", 0x13e) } });
    const uint64_t libc = 0x7f3a1c600000ull;
    const uint64_t bin = 0x55d4c2a00000ull;
    s.push_back(Stack { kUserSemopStack, StackKind::User,
        { uframe("semop", 0xb, "/usr/lib/x86_64-linux-gnu/libc.so.6", libc + 0x10f1e0),
            uframe("run", 0x9e, "/usr/local/bin/semop-multi", bin + 0x3a40),
            uframe("start_thread", 0x2f2, "/usr/lib/x86_64-linux-gnu/libc.so.6", libc + 0x89134),
            uframe("clone3", 0x2c, "/usr/lib/x86_64-linux-gnu/libc.so.6", libc + 0x1097dc) } });
    return s;
}

struct SiteSpec {
    uint32_t stack;
    std::optional<uint32_t> user;
    uint64_t waits;
    uint64_t wait_median;
    uint64_t holds;
    uint64_t hold_median;
};

Lock makeLock(Rng& rng, std::string key, std::string type, std::optional<uint64_t> address,
    uint32_t instances, uint64_t aborted, const std::vector<SiteSpec>& sites)
{
    Lock l;
    l.key = std::move(key);
    l.type = std::move(type);
    l.address = address;
    l.instances = instances;
    l.aborted = aborted;
    for (const auto& spec : sites) {
        LockSite site;
        site.stack_id = spec.stack;
        site.user_stack_id = spec.user;
        addSpread(site.wait, rng, spec.waits, spec.wait_median, 6);
        addSpread(site.hold, rng, spec.holds, spec.hold_median, 3);
        l.wait.merge(site.wait);
        l.hold.merge(site.hold);
        l.sites.push_back(std::move(site));
    }
    return l;
}

LatencyEntry latency(Rng& rng, std::string name, uint64_t calls, uint64_t median, uint64_t errors)
{
    LatencyEntry e;
    e.name = std::move(name);
    addSpread(e.latency, rng, calls, median, 5);
    e.errors = errors;
    return e;
}

ProbeStatus attached(std::string name, std::string target, std::string hook, std::string note = "")
{
    return ProbeStatus { std::move(name), std::move(target), std::move(hook), true, std::move(note) };
}

ProbeStatus skipped(std::string name, std::string target, std::string hook, std::string reason)
{
    return ProbeStatus { std::move(name), std::move(target), std::move(hook), false, std::move(reason) };
}

} // namespace

Capture makeSemopCapture(SemopScenario scenario)
{
    const bool patched = scenario == SemopScenario::Patched;
    Rng rng(patched ? 0x5e3f1c : 0x5e3b45e);
    auto pick = [patched](uint64_t p, uint64_t b) { return patched ? p : b; };
    Capture c;

    Meta& m = c.meta;
    m.tool_version = "0.1.0";
    m.label = patched ? "patched" : "baseline";
    m.kernel_release = patched ? "6.18.0-lockscope-semfix" : "6.18.0-lockscope-base";
    m.kernel_version = patched ? "#2 SMP PREEMPT_DYNAMIC Fri Mar 14 09:58:40 UTC 2025"
                               : "#1 SMP PREEMPT_DYNAMIC Fri Mar 14 08:41:07 UTC 2025";
    m.kernel_build_id
        = patched ? "3f9a0c1d5e7b2468ace013579bdf2468ace01357" : "a41c7e2b9d05f3186c4e0b7a29d58f61e3c0b2a4";
    m.hostname = "lockscope-lab";
    m.cpu_model = "Intel(R) Xeon(R) Platinum 8375C CPU @ 2.90GHz";
    m.cpu_count = 8;
    m.start_time = patched ? "2025-03-14T10:02:11Z" : "2025-03-14T09:26:53Z";
    m.duration_s = 10.004;
    m.command = { "lockscope", "record", "--label", m.label, "--cpu-profile", "999", "--", "semop-multi",
        "--threads", "8", "--sems", "16", "--duration", "10" };
    m.filters = { { "lock_types", "all" }, { "syscalls", "ipc,timer" } };

    c.probes = {
        attached("lock_contention", "lock:contention_begin,lock:contention_end", "tp_btf"),
        attached("spin_hold", "_raw_spin_lock,_raw_spin_unlock", "fentry"),
        skipped("ipc_sem_lock", "sem_lock", "fentry",
            "sem_lock is inlined in this kernel build (no BTF FUNC); contention stacks through ipc/ cover "
            "it"),
        attached("func:do_semtimedop", "do_semtimedop", "fentry"),
        attached("func:__lock_timer", "__lock_timer", "fentry"),
        attached("syscall:semop", "syscalls:sys_enter_semop,syscalls:sys_exit_semop", "tracepoint"),
        attached(
            "syscall:semtimedop", "syscalls:sys_enter_semtimedop,syscalls:sys_exit_semtimedop", "tracepoint"),
        attached("syscall:semget", "syscalls:sys_enter_semget,syscalls:sys_exit_semget", "tracepoint"),
        attached("syscall:semctl", "syscalls:sys_enter_semctl,syscalls:sys_exit_semctl", "tracepoint"),
        attached("syscall:timer_gettime", "syscalls:sys_enter_timer_gettime,syscalls:sys_exit_timer_gettime",
            "tracepoint"),
        attached("syscall:timer_settime", "syscalls:sys_enter_timer_settime,syscalls:sys_exit_timer_settime",
            "tracepoint"),
        skipped("user_locks", "", "", "no --user-binary given"),
        attached("cpu_profile", "cpu-clock", "perf_event", "999 Hz on 8 CPUs"),
    };

    c.stacks = semopStacks(patched);

    const uint64_t semWaits = patched ? 31000 : 612000;
    const uint64_t semWaitMedian = patched ? 700 : 9000;
    const uint64_t ops = patched ? 11874310 : 4123456;
    c.locks.push_back(makeLock(rng, "spinlock@sem_lock", "spinlock",
        patched ? std::nullopt : std::optional<uint64_t>(0xffff8881047a3c40ull), patched ? 16u : 1u, 0,
        { { kSemopStack, kUserSemopStack, semWaits, semWaitMedian, ops, pick(240, 1100) },
            { kSemtimedopStack, std::nullopt, pick(9800, 188000), pick(650, 8500), pick(98000, 96000),
                pick(260, 1150) },
            { kSemctlStack, std::nullopt, pick(2600, 2400), 12000, pick(2600, 2400), 5200 } }));
    c.locks.push_back(makeLock(rng, "rename_lock", "spinlock", 0xffffffff83a0c2c0ull, 1, 0,
        { { kRenameStack, std::nullopt, pick(152, 140), 2500, pick(1210, 1190), 900 } }));
    c.locks.push_back(makeLock(rng, "spinlock@__lock_timer", "spinlock", std::nullopt, 4, 0,
        { { kTimerGetStack, std::nullopt, pick(4100, 4300), 1800, 5000, 180 },
            { kTimerSetStack, std::nullopt, pick(1000, 1000), 2100, 1000, 260 } }));
    c.locks.push_back(makeLock(rng, "rwsem@ipcget", "rwsem", std::nullopt, 1, pick(0, 1),
        { { kIpcgetStack, std::nullopt, pick(45, 48), 40000, 0, 0 } }));

    const uint64_t semtimedop = pick(98000, 96000);
    c.syscalls = {
        latency(rng, "semop", ops, pick(4200, 14000), 0),
        latency(rng, "semtimedop", semtimedop, pick(4800, 15500), 1200),
        latency(rng, "semget", 8, 3000, 0),
        latency(rng, "semctl", pick(2600, 2400), 21000, 0),
        latency(rng, "timer_gettime", 5000, 600, 0),
        latency(rng, "timer_settime", 1000, 900, 0),
    };
    c.functions = {
        latency(rng, "do_semtimedop", ops + semtimedop, pick(3500, 12000), 1200),
        latency(rng, "__lock_timer", 6000, 150, 0),
    };

    CpuProfile& cpu = c.cpu;
    cpu.frequency_hz = 999;
    cpu.samples = 79920; // 8 CPUs x 10 s x 999 Hz
    if (patched) {
        cpu.top_leaves = { { "perform_atomic_semop", "", 18900 }, { "do_semtimedop", "", 12300 },
            { "entry_SYSCALL_64", "", 9800 }, { "default_idle", "", 9100 },
            { "queued_spin_lock_slowpath", "", 3900 }, { "_raw_spin_lock", "", 1135 } };
        cpu.lock_samples = 3900 + 1135; // 6.3%
        cpu.idle_samples = 9100;
        cpu.stacks = { { kCpuSemopStack, 18900 }, { kSemopStack, 3400 }, { kSemtimedopStack, 500 },
            { kCpuIdleStack, 9100 } };
    } else {
        cpu.top_leaves = { { "queued_spin_lock_slowpath", "", 43950 }, { "perform_atomic_semop", "", 6420 },
            { "do_semtimedop", "", 4100 }, { "_raw_spin_lock", "", 3203 }, { "entry_SYSCALL_64", "", 2810 },
            { "default_idle", "", 1200 } };
        cpu.lock_samples = 43950 + 3203; // 59.0%
        cpu.idle_samples = 1200;
        cpu.stacks = { { kSemopStack, 34100 }, { kSemtimedopStack, 9700 }, { kCpuSemopStack, 6420 },
            { kCpuIdleStack, 1200 } };
    }

    c.stats = Stats { pick(12030120, 5140870), 0, 0, pick(3, 17), pick(0, 1), 2, 0 };

    Workload& w = c.workload;
    w.command = { "semop-multi", "--threads", "8", "--sems", "16", "--duration", "10" };
    w.exit_status = 0;
    // ops_per_sec as the workload prints it; ops / duration_s, kept exact in decimal.
    w.results = { { "benchmark", "semop-multi" }, { "mode", "single" }, { "ops", ops },
        { "ops_per_sec", patched ? 1187431.0 : 412345.6 }, { "threads", 8 }, { "semaphores", 16 },
        { "nsops", 1 }, { "duration_s", 10.0 }, { "interrupted", false } };
    return c;
}

Capture makeSyntheticCapture(uint32_t stackCount, uint32_t lockCount, uint64_t seed)
{
    Rng rng(seed);
    Capture c;
    c.meta.tool_version = "0.1.0";
    c.meta.label = "synthetic";
    c.meta.kernel_release = "6.18.0";
    c.meta.cpu_model = "synthetic";
    c.meta.cpu_count = 64;
    c.meta.start_time = "2025-01-01T00:00:00Z";
    c.meta.duration_s = 60.0;
    c.probes.push_back(attached("lock_contention", "lock:contention_begin,lock:contention_end", "tp_btf"));

    // A pool of function names, so frames repeat like real kernel stacks do.
    std::vector<std::string> names;
    for (unsigned i = 0; i < 4096; ++i)
        names.push_back("kernel_function_" + std::to_string(i));
    c.stacks.reserve(stackCount);
    for (uint32_t id = 1; id <= stackCount; ++id) {
        Stack s;
        s.id = id;
        const auto depth = static_cast<size_t>(8 + rng.below(17));
        for (size_t d = 0; d < depth; ++d) {
            const std::string& fn = names[static_cast<size_t>(rng.below(names.size()))];
            const uint64_t off = rng.below(0x800);
            s.frames.push_back(Frame { fn, off, "", kernelText(fn) + off });
        }
        c.stacks.push_back(std::move(s));
    }
    c.locks.reserve(lockCount);
    for (uint32_t i = 0; i < lockCount; ++i) {
        std::vector<SiteSpec> sites;
        const uint64_t n = 1 + rng.below(4);
        for (uint64_t k = 0; k < n && stackCount; ++k)
            sites.push_back(
                { static_cast<uint32_t>(1 + rng.below(stackCount)), std::nullopt, 1 + rng.below(100000),
                    500 + rng.below(50000), 1 + rng.below(100000), 100 + rng.below(5000) });
        c.locks.push_back(makeLock(rng, "spinlock@synthetic_caller_" + std::to_string(i), "spinlock",
            0xffff888100000000ull + uint64_t { i } * 64, 1, 0, sites));
    }
    c.cpu.frequency_hz = 99;
    c.workload.command = { "synthetic" };
    c.workload.exit_status = 0;
    c.workload.results = { { "ops_per_sec", 1000 } };
    return c;
}

} // namespace lockscope::testing
