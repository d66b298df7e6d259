// SPDX-License-Identifier: GPL-2.0-or-later
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "lockscope/capture/histogram.h"
#include "lockscope/util/interned_string.h"

// The capture model: what one `lockscope record` run saw. It is the contract
// between the recorder, the reports, the exporters and the GUI, so it holds
// plain values only (no BPF, Qt or CLI types). docs/capture-format.md
// describes the JSON form field by field.
namespace lockscope {

inline constexpr const char* kCaptureFormat = "lockscope-capture";
inline constexpr int kCaptureVersion = 1;
// The compact layout: the same sections and fields, with symbols named once
// and sparse histograms (docs/capture-format.md). Both versions are read.
inline constexpr int kCaptureVersionCompact = 2;
inline constexpr int kCaptureVersionNewest = kCaptureVersionCompact;

// The one frame of the stack under which a lock's waits whose stack was not
// walked (stack sampling) are kept: counted and timed, with no call path.
inline constexpr const char* kNotSampledFrame = "[stack not sampled]";
// The one frame of a stack that could not be taken (the walk failed), named
// the way perf names what it cannot show.
inline constexpr const char* kNoStackFrame = "[no stack]";

// Where a capture was recorded, so that reports can say how far its times
// hold (a guest's waits include its vCPUs' preemption by the host). record
// fills what the recording kernel sees; the lab adds what only the host
// knows. Rules and wording: virtualization.h.
struct Virtualization {
    std::string kind;         // "none" (bare metal), "kvm", "tcg" (single-threaded or threading unknown),
                              // "tcg-multi", "vm" (another or an unknown hypervisor); "" = not recorded
    std::string hypervisor;   // the vendor the guest sees ("KVM", "TCG", "Microsoft Hv", "QEMU"); "" = none
    std::string detected_by;  // "cpuid", "dmi", "/sys/hypervisor", "lab" ...
    uint32_t vcpus = 0;       // lab runs: the guest's CPUs (0 = unknown)
    uint32_t host_cores = 0;  // lab runs: the host's online CPUs (0 = unknown)
    std::optional<double> host_load; // lab runs: the host's highest 1-minute load average seen during the run
    bool operator==(const Virtualization&) const = default;
};

struct Meta {
    std::string tool_version;
    std::string label;           // "baseline", "patched", ...
    std::string kernel_release;  // uname -r
    std::string kernel_version;  // uname -v
    std::string kernel_build_id; // hex, from /sys/kernel/notes; empty if unknown
    std::string hostname;
    std::string cpu_model;
    uint32_t cpu_count = 0;
    std::string start_time;      // RFC 3339, UTC
    double duration_s = 0.0;
    std::vector<std::string> command;            // the lockscope command line
    std::map<std::string, std::string> filters;  // filter name -> value as given
    // Captures before syscall timing became opt-in (--syscalls): why record
    // did not time syscalls although not told to. Read, no longer written:
    // the "syscalls" probe's status says it (syscallTimingNotMeasured).
    std::string syscall_timing_skipped;
    Virtualization virtualization;
    bool operator==(const Meta&) const = default;
};

// One probe the recorder tried. hook is how it attached ("tp_btf", "raw_tp",
// "tracepoint", "fentry", "fexit", "kprobe", "kretprobe", "uprobe",
// "perf_event") or, when skipped, the hook it tried last ("" if none).
struct ProbeStatus {
    std::string name;     // "lock_contention", "spin_hold", "syscall:semtimedop", ...
    std::string target;   // the kernel function / tracepoint / binary:symbol
    std::string hook;
    bool attached = false;
    std::string reason;   // why skipped, or a note (e.g. "fentry EPERM, fell back")
    bool operator==(const ProbeStatus&) const = default;
};

// A probe's reason when the user turned it off (--no-cpu, ...).
inline constexpr const char* kProbeDisabled = "disabled";
// "off unless asked for (--hold)": a probe off by default for its cost.
std::string offUnlessAskedFor(const std::string& flag);

// The probes record leaves off unless asked for: each hooks every call of a
// hot kernel function, which costs a syscall-bound workload tens of percent
// (docs/recording.md). `record --FLAG` turns one on, `--no-FLAG` keeps it
// off; lab recordings and the GUI's Record dialog offer the same list.
struct OptInProbe {
    std::string_view probe;    // ProbeStatus::name
    std::string_view flag;     // "syscalls": --syscalls / --no-syscalls
    std::string_view measures; // for people: "IPC/timer syscall latency"
};
inline constexpr std::array<OptInProbe, 3> kOptInProbes = {{
    {"syscalls", "syscalls", "IPC/timer syscall latency"},
    {"spin_hold", "hold", "Spin-lock hold times"},
    {"functions", "functions", "IPC/timer lookup-function latency"},
}};
// Off by the user's choice or by default, not for want of a hook: listed
// with the probes, never a warning.
bool offByChoice(const ProbeStatus& p);

// Never silently zero: every counter the recorder can know is here.
struct Stats {
    uint64_t events = 0;          // probe events aggregated
    uint64_t lost = 0;            // events the kernel side could not record
    uint64_t map_full = 0;        // updates dropped because a map was full
    uint64_t stack_failures = 0;  // bpf_get_stackid failures
    uint64_t aborted_waits = 0;   // contention_end with ret < 0
    uint64_t unmatched = 0;       // end/unlock with no matching begin/lock
    uint64_t recursion_misses = 0;// programs the kernel skipped (re-entry)
    uint64_t holder_not_found = 0;// holder stacks: contended spinlock waits whose holder no CPU showed
    uint64_t stacks_unsampled = 0;// waits counted and timed whose stack was not walked (stack sampling)
    uint64_t own_lock_events = 0; // waits and holds of locks lockscope's own BPF programs took, left out
    uint64_t impossible_holds = 0;// holds whose release came before their acquisition (clock wrap), dropped
    uint64_t hold_races = 0;      // hold pairings an irq moved the held stack under, redone (see hold_common.bpf.h)
    uint64_t waits_untimed = 0;   // contended waits counted but not timed (timing budget): their
                                  // histogram entries follow the timed waits of the same lock
    uint64_t syscalls_untimed = 0;// syscalls counted but not timed (syscall timing budget): their
                                  // histogram entries follow the timed calls of the same syscall
    uint64_t cpu_unstacked = 0;   // kernel-mode CPU samples counted by their function alone: their
                                  // stack could not be kept (stack maps full or the walk failed)
    uint64_t owner_stacks_unsampled = 0; // lock owners named without their stack: the wait's own
                                         // stack was not walked (stack budget), so neither was theirs
    uint64_t stale_holds = 0;     // held-stack entries whose release was never seen, dropped when
                                  // their lock was taken again (see hold_common.bpf.h drop_stale)
    uint64_t bpf_frames = 0;      // BPF trampoline and program frames removed from kernel stacks
                                  // (lock_frames.h dropBpfFrames)
    uint64_t map_busy = 0;        // updates dropped because the map's bucket was busy on that CPU (a
                                  // program interrupted a map operation on it), not full
    uint64_t untimed_unplaced = 0;// of lost: untimed waits and syscalls (timing budgets) with no timed
                                  // one of their lock or syscall to take times from, left out
    uint64_t stack_collisions = 0;// of stack_failures: the stack's hash bucket in the kernel's stack
                                  // map held another stack, and so did the spill map's (-EEXIST)
    uint64_t stacks_nested = 0;   // of stack_failures: another stack walk was running on the CPU
                                  // (most often the walk's own map lock, an event left out)
    uint64_t stacks_spilled = 0;  // stacks kept in the spill map: their bucket in their own map
                                  // held another stack (not failures)
    // Field by field, for the totals of several runs (capture.cpp lists every field).
    Stats& operator+=(const Stats& other) noexcept;
    bool operator==(const Stats&) const = default;
};

// Names are interned: stacks repeat them millions of times (see
// interned_string.h); read them as strings, compare them by identity.
struct Frame {
    InternedString function;        // "" when unresolved
    uint64_t offset = 0;            // from the function start
    InternedString module;          // "" = vmlinux; a module name or a user binary path
    std::optional<uint64_t> address;// raw address, absent when redacted
    bool operator==(const Frame&) const = default;
};

enum class StackKind { Kernel, User };

// Frames are ordered innermost first (frames[0] is the leaf, as perf prints
// callchains). Stacks are deduplicated: ids are unique within a capture.
struct Stack {
    uint32_t id = 0;
    StackKind kind = StackKind::Kernel;
    std::vector<Frame> frames;
    bool operator==(const Stack&) const = default;
};

// Who held the lock while a site waited: for spinlocks (record
// --holder-stacks) the holder's acquire stack; for mutexes and writer-owned
// rwsems (record --lock-owner) the owner task named by the lock word and
// its kernel stack when the wait began (where the holder was). Approximate:
// both are read racily at the start of the wait.
struct Holder {
    uint32_t stack_id = 0;   // spinlocks: the stack that took the lock; owners: where the owner was
    uint64_t count = 0;      // waits attributed to it
    uint64_t wait_ns = 0;    // their total wait time
    std::optional<uint32_t> owner_tid; // lock owners only: the owner task
    std::string owner_comm;            // its name ("" if unknown)

    Holder() = default;
    // Spinlock holders name a stack only; owners add the task.
    Holder(uint32_t stack, uint64_t waits, uint64_t ns, std::optional<uint32_t> tid = {}, std::string comm = {})
        : stack_id(stack), count(waits), wait_ns(ns), owner_tid(tid), owner_comm(std::move(comm))
    {
    }
    bool operator==(const Holder&) const = default;
};

// Wait and hold statistics of one lock seen from one call stack.
struct LockSite {
    uint32_t stack_id = 0;                  // kernel (or user, for user locks) stack
    std::optional<uint32_t> user_stack_id;  // optional user stack of the same event
    Log2Hist wait;
    uint64_t wait_untimed = 0;              // of wait.count(), waits whose time is estimated (timing budget;
                                            // tail_basis.h says what the tail figures rest on)
    Log2Hist hold;
    Log2Hist acquire;                       // spin-lock calls, entry to return, above the hold probe's threshold
    std::vector<Holder> holders;            // by wait_ns, descending; empty unless holder stacks ran
    bool operator==(const LockSite&) const = default;
};

// One lock (or lock class). key is stable across kernel builds: the global
// symbol name when the address resolves to one ("rename_lock"), else
// "<type>@<caller function>" ("spinlock@sem_lock").
struct Lock {
    std::string key;
    std::string type;                 // spinlock, rwlock, mutex, rwsem, rtmutex, percpu-rwsem, semaphore, pthread-mutex, ...
    std::string name;                 // what the lock is, when known: a global symbol, "mmap_lock", "siglock",
                                      // "rq_lock", "&<slab cache>" ("" = unknown); the key stays the caller's
    std::string cgroup;               // cgroup v2 path of the waiters (record --per-cgroup); "" = all cgroups
    std::optional<uint64_t> address;  // one instance's address (absent when redacted or many)
    uint32_t instances = 1;           // distinct addresses folded into this key
    uint64_t aborted = 0;             // waits that ended with an error
    Log2Hist wait;                    // over all sites
    uint64_t wait_untimed = 0;        // as LockSite::wait_untimed, over all sites
    Log2Hist hold;
    // How long the lock call took to return (record --hold): the spin the
    // contention tracepoint may not report. Only acquisitions above the hold
    // probe's threshold (meta.filters "acquire_min_ns") are in it.
    Log2Hist acquire;
    std::vector<LockSite> sites;
    // The name where it says more than the key: a global lock is keyed by
    // its symbol already (rtnl_mutex), and "rtnl_mutex rtnl_mutex" is noise.
    std::string nameBesideKey() const { return nameBesideKey(key, name); }
    static std::string nameBesideKey(const std::string& key, const std::string& name)
    {
        return name == key ? std::string() : name;
    }
    bool operator==(const Lock&) const = default;
};

// Latency of one syscall or kernel function (enter -> exit).
struct LatencyEntry {
    std::string name;   // "semtimedop", "__lock_timer"
    Log2Hist latency;
    uint64_t errors = 0;// calls that returned an error
    uint32_t sample_period = 1; // 1 in N calls per thread timed; latency and errors count timed calls
    uint64_t all_calls = 0;     // when sampled: every call, counted exactly (0: not counted)
    // Calls in all: exact unless sampled without a count.
    uint64_t calls() const
    {
        return sample_period == 1 ? latency.count() : (all_calls ? all_calls : latency.count() * sample_period);
    }
    bool operator==(const LatencyEntry&) const = default;
};

struct LeafShare {
    std::string function;
    std::string module;
    uint64_t samples = 0;
    bool operator==(const LeafShare&) const = default;
};

struct StackCount {
    uint32_t stack_id = 0;
    uint64_t count = 0;
    bool operator==(const StackCount&) const = default;
};

// Sampled on-CPU profile: the share of CPU spent in lock functions is
// lock_samples / samples.
struct CpuProfile {
    uint32_t frequency_hz = 0;     // 0 when not sampled
    uint64_t samples = 0;
    uint64_t lock_samples = 0;     // leaf in _raw_spin_lock*, queued_spin_lock_slowpath, ...
    uint64_t idle_samples = 0;     // leaf in the idle loop
    std::vector<LeafShare> top_leaves; // sorted by samples, descending
    std::vector<StackCount> stacks;
    // A BPF program, trampoline or tracepoint dispatcher on the stack: the
    // cost of lockscope's own probes (and of any other BPF tool running).
    // Empty when not counted (a capture written before lockscope counted it,
    // an import), which is not the same as none.
    std::optional<uint64_t> bpf_samples;
    double lockShare() const noexcept { return samples ? double(lock_samples) / double(samples) : 0.0; }
    double bpfShare() const noexcept { return samples ? double(bpf_samples.value_or(0)) / double(samples) : 0.0; }
    bool operator==(const CpuProfile&) const = default;
};

struct Workload {
    std::vector<std::string> command;
    std::optional<int> exit_status;  // exit code when it exited
    std::optional<int> signal;       // signal number when it was killed
    nlohmann::json results = nlohmann::json::object(); // {"lockscope_result": {...}} payload
    bool operator==(const Workload&) const = default;
};

struct Capture {
    Meta meta;
    std::vector<ProbeStatus> probes;
    Stats stats;
    std::vector<Stack> stacks;
    std::vector<Lock> locks;
    std::vector<LatencyEntry> syscalls;
    std::vector<LatencyEntry> functions;
    CpuProfile cpu;
    Workload workload;

    // nullptr when absent. Linear; use StackIndex for repeated look-ups.
    const Stack* findStack(uint32_t id) const noexcept;
    bool operator==(const Capture&) const = default;
};

// O(1) id -> stack look-up over a capture that is not modified meanwhile.
class StackIndex {
public:
    explicit StackIndex(const Capture& capture);
    const Stack* find(uint32_t id) const noexcept;

private:
    std::vector<const Stack*> dense_;           // when ids are small
    std::map<uint32_t, const Stack*> sparse_;   // otherwise
};

const char* toString(StackKind kind) noexcept;

// Why a capture has no syscall latency although it could have: "" when it was
// timed or the user said --no-syscalls, else the reason (old captures' meta,
// or the "syscalls" probe's status). An empty syscall table then means "not
// measured", not "no syscalls".
std::string syscallTimingNotMeasured(const Meta& meta, const std::vector<ProbeStatus>& probes);

} // namespace lockscope
