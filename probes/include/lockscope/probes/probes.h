// SPDX-License-Identifier: GPL-2.0-or-later
#pragma once

// The userspace face of the BPF probes: open, choose a backend per probe,
// attach, and read the in-kernel aggregates as raw records (addresses and
// stack ids, unsymbolized). collector turns these into a Capture.

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "lockscope/capture/capture.h"
#include "lockscope/capture/histogram.h"

namespace lockscope::probes {

// One line for the user: "BPF needs root or CAP_BPF+CAP_PERFMON", ...
class ProbeError : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

enum class Backend { Auto, Fentry, Kprobe, TpBtf, RawTp, Tracepoint, Off };

// [begin, end) of a kernel function's code.
struct AddressRange {
    uint64_t begin = 0;
    uint64_t end = 0;
};

// Options::cpu_leaf_functions beyond this many are ignored (LS_CPU_LEAF_RANGES).
inline constexpr size_t kMaxCpuLeafFunctions = 64;

// A backend as flags, probe lines and captures spell it ("tp_btf"), and back
// (nullopt for a name that is none); backendNames() lists them all for a
// usage message: "auto, fentry, kprobe, tp_btf, raw_tp, tracepoint, off".
const char* backendName(Backend b) noexcept;
std::optional<Backend> backendFromName(std::string_view name) noexcept;
std::string backendNames();
// The names of these backends joined by ", ", the last one by lastSeparator
// ("auto, fentry, raw_tp or tracepoint" with " or ").
std::string backendNames(const std::vector<Backend>& backends, std::string_view lastSeparator = ", ");

// The probe families whose hook can be chosen (Options::wait, hold,
// syscall_backend).
enum class HookFamily { Wait, Hold, Syscalls };
// What the family's Options field accepts: Auto, each hook in the order Auto
// tries them, and Off where the family is turned off that way (the hold probe).
std::vector<Backend> familyBackends(HookFamily family);
// The hooks to try for a backend, in order: all of them for Auto, the one
// asked for, none for Off or a backend the family cannot use.
std::vector<Backend> hooksToTry(HookFamily family, Backend backend);

struct UserLockSpec {
    std::string binary;      // path of the executable or shared library
    std::string lock_fn;     // e.g. "pthread_mutex_lock"
    std::string unlock_fn;   // e.g. "pthread_mutex_unlock"
    std::string type = "pthread-mutex";
};

// pthread_mutex_lock/pthread_mutex_unlock in libc.so.6 (resolved through the
// library search path), the --user-locks default.
std::vector<UserLockSpec> defaultUserLocks();

struct Options {
    unsigned stack_depth = 16;          // frames kept after the lock-internal ones; 0 = no stacks
                                        // (ids -1): stack capture dominates per-event cost
    uint32_t stack_sample = 1;          // walk the stack of 1 in N waits (and holds) per CPU; the
                                        // others get kstack_id LS_STACK_UNSAMPLED (-3)
    uint32_t stack_budget = 0;          // when stack_sample is 1: the wait and the hold probe each
                                        // walk at most this many stacks per second per CPU (sampling
                                        // evenly above it); 0 = every one. Holder stacks walk every hold
    uint32_t timing_budget = 0;         // contended waits timed per second per CPU; above it 1 in N
                                        // per lock is timed, every wait counted, and the untimed
                                        // ones get the times of the timed ones (Stats::waits_untimed);
                                        // 0 = time every wait. Off with holder_stacks
    uint32_t wait_rate_cap = 0;         // with drain: contention_begin runs a second per CPU (before
                                        // any filter: their cost) above which the wait programs
                                        // attach for only part of each period and the drained waits
                                        // are scaled up by that share (an estimate:
                                        // Snapshot::wait_share); 0 = attached all the time. Not with
                                        // holder_stacks (the scan needs every wait)
    bool exact_tail = true;             // under the timing budget, time every wait of at least
                                        // exactWaitNs() all the same; off only to measure its cost
    bool per_tgid = false;              // key waits by tgid as well
    bool per_cgroup = false;            // key waits and holds by the task's cgroup v2 id as well
    uint64_t cgroup_id = 0;             // in-kernel filter: only tasks in this cgroup v2 or below; 0 = any
    uint32_t cgroup_level = 0;          // its depth under the cgroup v2 root (the root is 0)
    std::vector<uint32_t> tgids;        // in-kernel filter; empty = every process
    bool follow_forks = true;           // children of filtered tgids join the filter
    std::string comm;                   // in-kernel comm filter; empty = any
    uint32_t lock_flags_mask = 0;       // contention flags filter (LCB_F_*); 0 = any
    std::vector<uint64_t> lock_addrs;   // in-kernel lock address filter; empty = any

    Backend wait = Backend::Auto;       // Auto: tp_btf -> raw_tp -> tracepoint
    Backend hold = Backend::Off;        // Auto: fentry -> kprobe. Off unless asked for: it runs on every
                                        // spin-lock acquisition of the system (docs/recording.md)
    uint32_t hold_sample = 1;           // record 1 in N acquisitions
    bool drain = false;                 // read out by Session::drain (lockscope agent): the hold
                                        // tables get two halves, one filled while the other is
                                        // read (twice their memory), so holds can be drained
    uint64_t acquire_min_ns = 1000;     // the hold probe times (and walks) acquisitions whose lock call
                                        // took at least this long: the spin the tracepoint may miss
    bool holder_stacks = false;         // attribute contended spinlock waits to the holder's stack;
                                        // needs the hold probe, which then records every acquisition
    bool lock_owner = false;            // name the owner task (and its stack) of contended mutexes and
                                        // writer-owned rwsems from the lock word
    bool lock_names = false;            // name contended locks by what they are (mmap_lock, siglock,
                                        // rq_lock, "&<slab cache>"), once per address
    bool syscalls = false;              // IPC and timer syscall latency. Off unless asked for: a hook
                                        // on every call costs a syscall-bound load 23-40% whatever
                                        // the budget (fentry; raw_tp taxes every syscall)
    Backend syscall_backend = Backend::Auto; // Auto: fentry -> raw_tp -> tracepoint
    uint32_t syscall_sample = 1;        // time 1 in N calls per thread
    uint32_t syscall_budget = 0;        // when syscall_sample is 1: calls timed per second per CPU;
                                        // above it 1 in N calls of each syscall is timed, every call
                                        // counted (errors too), and the untimed ones get the times of
                                        // the timed ones (Stats::syscalls_untimed); 0 = time every call
    Backend functions = Backend::Off;   // __lock_timer, ipc_lock, ...: Auto: fentry -> kprobe. Off unless
                                        // asked for: every call, two clock reads (the syscalls cover the
                                        // same calls under a budget; docs/recording.md)
    uint32_t cpu_frequency_hz = 199;    // per CPU; 0 disables CPU sampling. Each sample is a timer
                                        // interrupt, dear in a VM (~50 us on a PVM guest: 997 Hz cost
                                        // a syscall-bound load 5%, 199 Hz 1%; bench/record/README.md);
                                        // 199 Hz x 2 CPUs x 5 s gives a share within ~1%
    uint32_t cpu_stack_keys = 16384;    // distinct kernel stacks CPU sampling counts; beyond them (or
                                        // when a stack walk fails) a sample counts by its function
    std::vector<AddressRange> cpu_leaf_functions; // the kernel functions such samples are told
                                        // apart by (lock and idle code), at most kMaxCpuLeafFunctions;
                                        // the rest count as "other kernel code"
    std::vector<UserLockSpec> user_locks;
    bool user_stacks = false;
};

// contention_begin flags (include/trace/events/lock.h) as a type name:
// "spinlock", "rwlock:R", "mutex", "rwsem:W", "rtmutex", "percpu-rwsem", ...
std::string lockTypeName(uint32_t flags);

// kstack_id of waits and holds whose stack was not walked (Options::stack_sample, stack_budget).
inline constexpr int64_t kStackUnsampled = -3;

struct LockRecord {
    uint64_t lock_addr = 0;
    int64_t kstack_id = -1;   // -1 when the stack could not be taken; kStackUnsampled
    int64_t ustack_id = -1;
    uint32_t flags = 0;       // LCB_F_* for waits; the hold probe's variant for holds
    uint32_t tgid = 0;        // 0 unless per_tgid
    std::string type;         // lockTypeName(flags) or the user lock's type
    uint64_t cgroup = 0;      // the waiter's (holds: the releaser's) cgroup v2 id; 0 unless per_cgroup
    Log2Hist hist;
    uint64_t untimed = 0;     // of hist.count(), waits whose time was estimated (timing budget)
};

// Under a timing budget, every wait at least this long is timed all the same
// (wait.bpf.c, exact_wait_ns): a power of two of at least 1.5 ticks of the
// coarse clock, whose tick reveals a long wait at its end. A histogram's
// buckets from here up are exact.
uint64_t exactWaitNs();

// Contended spinlock waits on one lock from one waiter stack, while the
// holder had taken the lock from holder_kstack_id (Options::holder_stacks).
// Approximate: the holder is read racily from another CPU's state.
struct HolderRecord {
    uint64_t lock_addr = 0;
    int64_t wait_kstack_id = -1;   // as LockRecord::kstack_id of the wait
    int64_t holder_kstack_id = -1; // -1: the holder's stack could not be taken
    uint32_t tgid = 0;             // 0 unless per_tgid
    uint64_t count = 0;
    uint64_t wait_ns = 0;          // total wait time of these waits
    uint64_t cgroup = 0;           // as LockRecord::cgroup
};

// Sleeping waits on one lock from one waiter stack whose lock word named
// owner_tid as the owner when they began (Options::lock_owner), with the
// owner's kernel stack at that moment. Racy like the kernel's own reads.
struct OwnerRecord {
    uint64_t lock_addr = 0;
    int64_t wait_kstack_id = -1;       // as LockRecord::kstack_id of the wait
    uint32_t tgid = 0;                 // 0 unless per_tgid
    uint32_t owner_tid = 0;
    std::string owner_comm;            // "" if its name was not read
    std::vector<uint64_t> owner_stack; // innermost first; empty: not walked
    uint64_t count = 0;
    uint64_t wait_ns = 0;
    uint64_t cgroup = 0;               // as LockRecord::cgroup
};

struct LatencyRecord {
    std::string name;         // "semtimedop", "__lock_timer"
    bool is_syscall = true;
    Log2Hist hist;
    uint64_t errors = 0;
    uint32_t sample_period = 1; // 1 in N calls timed; hist and errors count timed calls only
    uint64_t all_calls = 0;     // when sampled: every call, counted exactly
};

struct CpuRecord {
    int64_t kstack_id = -1;
    uint64_t count = 0;
};

// Kernel-mode CPU samples whose stack was not kept, counted by the function
// they interrupted: function is the begin of one of Options::cpu_leaf_functions,
// or 0 for any other kernel code.
struct CpuUnstackedRecord {
    uint64_t function = 0;
    uint64_t count = 0;
};

struct Snapshot {
    std::vector<LockRecord> waits;
    std::vector<LockRecord> holds;
    std::vector<LockRecord> acquires;   // slow spin acquisitions (entry to return), as holds are keyed
    std::vector<LockRecord> user_waits;
    std::vector<LockRecord> user_holds;
    std::vector<HolderRecord> holders;
    std::vector<OwnerRecord> owners;
    std::vector<LatencyRecord> latencies;
    std::vector<CpuRecord> cpu;
    std::vector<CpuUnstackedRecord> cpu_unstacked;
    uint64_t cpu_samples = 0;
    std::map<uint64_t, std::string> lock_names; // lock address -> what it is (Options::lock_names)
    Stats stats;              // events, lost, map_full, stack_failures, ...
    double wait_share = 1;    // drained: the share of the window the wait programs were attached
                              // (Options::wait_rate_cap); below 1 the waits were scaled up by it
};

// [begin, end) of a loaded program's JIT-compiled code (or one of its
// subprograms'), named as /proc/kallsyms names it: bpf_prog_<tag>_<name>.
struct ProgramCode {
    uint64_t begin = 0;
    uint64_t end = 0;
    std::string name;
};

// One loaded program's run statistics (bpf_prog_info).
struct ProgramStats {
    std::string name;
    uint64_t run_ns = 0;
    uint64_t run_count = 0;
};

// kernel.bpf_stats_enabled: the kernel counts programs' run time only while it is 1.
bool bpfStatsEnabled();

class Session {
public:
    // Opens, loads and attaches everything Options asks for, choosing the
    // backend of each probe. Throws ProbeError only when nothing useful can
    // run (no permission, no BTF); a single probe that cannot attach is
    // reported in status() instead.
    static std::unique_ptr<Session> open(const Options& options);
    virtual ~Session() = default;

    // One entry per probe, attached or skipped with the reason.
    virtual const std::vector<ProbeStatus>& status() const = 0;
    // Adds a process to the in-kernel filter (e.g. the spawned workload).
    virtual void addTgid(uint32_t tgid) = 0;
    // Cheap running total of events, for a live status line.
    virtual uint64_t eventsSoFar() const = 0;
    // Reads every map. Can be called while attached.
    virtual Snapshot snapshot() const = 0;
    // What was aggregated since the previous drain (or the attach), for a
    // reader that never stops (lockscope agent): the wait and CPU families'
    // maps are read and emptied key by key (lookup-and-delete), counters
    // come as differences, so memory stays bounded and no event is counted
    // twice. Lock owners are taken by generation, after a grace period, so
    // none is lost or doubled either (lock_owners.h). Holds (with Options::drain)
    // likewise, by halves of their tables. Waits still parked in the
    // per-CPU rings or count caches come with a later drain. Families that
    // cannot be emptied while attached (holds without Options::drain,
    // syscalls, functions, user locks, holder stacks) are not read:
    // drainable() says whether every attached one can be.
    virtual Snapshot drain() = 0;
    virtual bool drainable() const = 0;
    // Deletes a stack id no record refers to any more (a drained reader's
    // stack maps would otherwise fill up).
    virtual void forgetStack(int64_t id) const = 0;
    // Raw instruction pointers, innermost first. Wait stacks start in the lock
    // code (e.g. __pv_queued_spin_lock_slowpath, _raw_spin_lock, rwsem_down_*):
    // the BPF frames are skipped in-kernel, the lock-internal ones are kept
    // (stack_depth + 8 frames) for record to skip by name.
    virtual std::vector<uint64_t> kernelStack(int64_t id) const = 0;
    virtual std::vector<uint64_t> userStack(int64_t id, uint32_t tgid) const = 0;
    // The JIT-compiled code of every program this session loaded: a lock
    // taken from inside one of them (a map's bucket lock on kernels before
    // rqspinlock) is the probes' own.
    virtual std::vector<ProgramCode> programCode() const = 0;
    // Every loaded program's run time and count; they only grow while
    // kernel.bpf_stats_enabled is 1 (bpfStatsEnabled()).
    virtual std::vector<ProgramStats> programStats() const = 0;
    // Stops the probes (maps stay readable).
    virtual void detach() = 0;
};

} // namespace lockscope::probes
