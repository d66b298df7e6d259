// SPDX-License-Identifier: GPL-2.0-or-later
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "lockscope/capture/capture.h"
#include "lockscope/probes/probes.h"
#include "lockscope/record/kallsyms.h"
#include "lockscope/record/lock_key_memory.h"

// Turns the probes' raw records (addresses, stack ids) into the capture's
// symbolized, deduplicated stacks and keyed locks.
namespace lockscope::record {

struct AssembleOptions {
    unsigned stack_depth = 16;           // frames kept after the lock-internal ones
    bool per_tgid = false;               // keys get a "#tgid" suffix
    bool per_cgroup = false;             // keys get a "#<cgroup path>" suffix, locks their cgroup
    // cgroup v2 id -> path ("/a/b"), for per_cgroup (cgroup_paths.h).
    std::function<std::string(uint64_t id)> cgroup_path;
    uint32_t cpu_frequency_hz = 0;
    size_t top_leaves = 25;
    // User-space filters applied to every lock record. Types match the base
    // name ("rwsem" matches rwsem:R and rwsem:W) or the full one.
    std::set<std::string> lock_types;
    std::set<std::string> lock_keys;          // exact lock keys
    std::set<uint64_t> lock_addrs;            // exact lock addresses
    std::vector<std::string> stack_contains;  // substring of any frame's function (like perf -S)
    // User lock entry points (uprobe targets): skipped like kernel lock
    // internals, together with glibc's pthread_mutex_* / __lll_lock_* frames.
    std::set<std::string> user_lock_functions;
    // lockscope's own loaded BPF programs: their frames get the program's
    // name, and a lock taken from inside one (not from an interrupt that
    // arrived while it ran) is left out and counted in stats.own_lock_events.
    std::vector<probes::ProgramCode> own_code;
    // Read out window by window (lockscope agent): the keys of earlier
    // windows, for the locks none of whose events this window walked.
    std::shared_ptr<LockKeyMemory> key_memory;
};

// Pseudo frame of a CPU sample taken in user mode (the CPU probe keys those
// with no kernel stack); a lock event whose stack could not be taken is
// capture.h's kNoStackFrame.
inline constexpr const char* kUserModeFrame = "[user]";
// The leaf of kernel-mode CPU samples whose stack was not kept and whose
// function is none of the lock and idle ones (probes::CpuUnstackedRecord).
inline constexpr const char* kOtherKernelFrame = "[other kernel code]";

class CaptureAssembler {
public:
    using KernelStackFn = std::function<std::vector<uint64_t>(int64_t id)>;
    using UserStackFn = std::function<std::vector<Frame>(int64_t id, uint32_t tgid)>;

    CaptureAssembler(const KernelSymbols& symbols, KernelStackFn kernelStack, UserStackFn userStack,
                     AssembleOptions options);

    // Fills stacks, locks, syscalls, functions, cpu and stats of `out`.
    void assemble(const probes::Snapshot& snapshot, Capture& out);

    // The frames of a kernel stack after the lock-internal prefix, for tests.
    std::vector<Frame> callerFrames(const std::vector<uint64_t>& ips) const;
    std::vector<Frame> userCallerFrames(std::vector<Frame> frames) const;
    // Key of a lock taken at `callerFrames` (see ARCHITECTURE.md).
    std::string lockKey(uint64_t lockAddr, const std::string& type,
                        const std::vector<Frame>& callerFrames) const;

private:
    Frame kernelFrame(uint64_t ip) const;
    // A stack symbolized once, for both of the checks below.
    std::vector<Frame> kernelFrames(const std::vector<uint64_t>& ips) const;
    std::vector<Frame> callerFramesOf(const std::vector<Frame>& all) const;
    // The stack without BPF trampoline and program frames (lock_frames.h), counted in bpfFrames_.
    std::vector<Frame> withoutBpfFrames(std::vector<Frame> frames) const;
    const probes::ProgramCode* ownCode(uint64_t ip) const;
    bool takenByOwnProgram(const std::vector<Frame>& all) const;
    uint32_t intern(StackKind kind, std::vector<Frame> frames, Capture& out);
    // "#tgid" and "#<cgroup path>" as asked: the same lock apart per process or cgroup.
    std::string partitionSuffix(const probes::LockRecord& r) const;
    std::string cgroupPath(uint64_t id) const;
    // What the lock at addr is ("" if unknown): a global symbol, else what the wait probe named it.
    std::string lockName(uint64_t addr) const;
    bool passesFilters(const probes::LockRecord& r, const std::string& key,
                       const std::vector<Frame>& frames) const;
    // A kernel wait or hold between reading and filing: its caller frames
    // and the key they give (empty when its stack was not walked).
    // Which of a lock's histograms a record fills.
    enum class Figure { Wait, Hold, Acquire };
    static Log2Hist& histOf(Lock& lock, Figure f);
    static Log2Hist& histOf(LockSite& site, Figure f);
    struct KernelRecord {
        const probes::LockRecord* r;
        Figure figure;
        std::vector<Frame> frames;
        std::optional<uint32_t> userStackId;
        std::string callerKey;
        bool passes; // a walked record: passed the filters under its lock's key
    };
    // One kernel lock: address, tgid (0 unless per_tgid), cgroup (0 unless per_cgroup), base type.
    using LockIdentity = LockKeyMemory::Identity;
    struct DecidedKey {
        std::string key;
        bool passed = false; // some walked record of the lock passed the filters
    };
    static std::vector<const probes::LockRecord*> canonicalOrder(
        const std::vector<probes::LockRecord>& records);
    static LockIdentity identityOf(const probes::LockRecord& r);
    // Its key in an earlier window (AssembleOptions::key_memory), or null.
    const LockKeyMemory::Key* recalledKey(const probes::LockRecord& r) const;
    void readKernelRecords(const std::vector<probes::LockRecord>& records, Figure figure, Capture& out);
    void decideKernelKeys();
    void fileKernelRecords(Capture& out);
    void addUserRecords(const std::vector<probes::LockRecord>& records, Figure figure, Capture& out);
    // Merges one record into its lock and site; returns their indexes in `out`.
    std::pair<size_t, size_t> addToLock(const std::string& key, const probes::LockRecord& r, Figure figure,
                                        StackKind kind, std::vector<Frame> frames,
                                        std::optional<uint32_t> userStackId, Capture& out);
    void assembleCpu(const probes::Snapshot& snapshot, Capture& out);
    void addHolders(const std::vector<probes::HolderRecord>& records, Capture& out);
    void addOwners(const std::vector<probes::OwnerRecord>& records, Capture& out);

    const KernelSymbols& symbols_;
    KernelStackFn kernelStack_;
    UserStackFn userStack_;
    AssembleOptions options_;

    std::map<std::pair<int, std::vector<std::string>>, uint32_t> stackIds_;
    std::map<std::string, size_t> lockIndex_;                  // key -> out.locks index
    std::map<std::string, std::set<uint64_t>> lockAddrs_;      // key -> distinct addresses
    std::map<std::tuple<std::string, uint32_t, int64_t>, size_t> siteIndex_;
    // Kernel wait (address, kernel stack id, tgid, cgroup) -> (out.locks index, site index), for holders and owners.
    std::map<std::tuple<uint64_t, int64_t, uint32_t, uint64_t>, std::pair<size_t, size_t>> waitSite_;
    const std::map<uint64_t, std::string>* probeNames_ = nullptr; // the snapshot's lock_names
    std::map<std::string, std::set<std::string>> lockNames_;       // key -> names of its addresses
    std::vector<KernelRecord> kernelRecords_;
    // Every record of a lock, walked or not, is filed under one key: its
    // hottest walked caller's (lock_identity.h).
    std::map<LockIdentity, DecidedKey> lockKeys_;
    // Addresses of locks our own programs took, for their waits not walked.
    std::set<uint64_t> ownLocks_;
    // BPF frames removed from kernel stacks (Stats::bpf_frames); counted where
    // a stack is symbolized, which the const look-ups above do too.
    mutable uint64_t bpfFrames_ = 0;
};

} // namespace lockscope::record
