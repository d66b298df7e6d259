// SPDX-License-Identifier: GPL-2.0-or-later
#include "lockscope/record/assemble.h"

#include <algorithm>
#include <array>
#include <cstdio>
#include <tuple>

#include "lockscope/capture/lock_frames.h"
#include "lockscope/record/lock_identity.h"

namespace lockscope::record {
namespace {

std::string frameSignature(const Frame& f)
{
    std::string s = f.module;
    s += '\x1f';
    s += f.function;
    s += '+';
    s += std::to_string(f.offset);
    if (f.address) {
        s += '@';
        s += std::to_string(*f.address);
    }
    return s;
}

bool isUserLockInternal(const std::string& name, const std::set<std::string>& entryPoints)
{
    static constexpr std::string_view kPrefixes[] = {
        "pthread_mutex_", "__pthread_mutex_", "___pthread_mutex_", "__lll_lock", "lll_lock",
        "pthread_rwlock_", "__pthread_rwlock_", "pthread_spin_", "__futex_abstimed_wait",
        "futex_wait",
    };
    if (entryPoints.count(name))
        return true;
    for (auto p : kPrefixes)
        if (std::string_view(name).substr(0, p.size()) == p)
            return true;
    return false;
}

std::string hex(uint64_t v)
{
    char buf[24];
    std::snprintf(buf, sizeof buf, "0x%llx", static_cast<unsigned long long>(v));
    return buf;
}

} // namespace

CaptureAssembler::CaptureAssembler(const KernelSymbols& symbols, KernelStackFn kernelStack,
                                   UserStackFn userStack, AssembleOptions options)
    : symbols_(symbols), kernelStack_(std::move(kernelStack)), userStack_(std::move(userStack)),
      options_(std::move(options))
{
}

Frame CaptureAssembler::kernelFrame(uint64_t ip) const
{
    Frame f;
    f.address = ip;
    // First: kallsyms was read before our programs were loaded, and would
    // name their code after whatever symbol precedes it.
    if (const auto* code = ownCode(ip)) {
        f.function = code->name;
        f.offset = ip - code->begin;
        f.module = "bpf"; // as kallsyms names the module of BPF programs
    } else if (auto r = symbols_.resolveText(ip)) {
        f.function = r->name;
        f.offset = r->offset;
        f.module = r->module;
    }
    return f;
}

const probes::ProgramCode* CaptureAssembler::ownCode(uint64_t ip) const
{
    for (const auto& c : options_.own_code)
        if (ip >= c.begin && ip < c.end)
            return &c;
    return nullptr;
}

// From the lock code outwards: one of our programs before any interrupt or
// exception entry took the lock itself; past such an entry the lock was taken
// by whatever interrupted it, which is real contention. Frames before the
// lock code (the probe program that fired in it, tracing glue) do not count.
bool CaptureAssembler::takenByOwnProgram(const std::vector<Frame>& all) const
{
    if (options_.own_code.empty())
        return false;
    size_t start = 0;
    while (start < all.size() && !isLockFunction(all[start].function))
        ++start;
    if (start == all.size())
        start = 0; // a hold stack taken at a kprobe starts at the lock's caller
    for (size_t i = start; i < all.size(); ++i) {
        if (all[i].address && ownCode(*all[i].address))
            return true;
        if (isKernelEntryFunction(all[i].function))
            return false;
    }
    return false;
}

std::vector<Frame> CaptureAssembler::kernelFrames(const std::vector<uint64_t>& ips) const
{
    std::vector<Frame> all;
    all.reserve(ips.size());
    for (uint64_t ip : ips)
        all.push_back(kernelFrame(ip));
    return all;
}

std::vector<Frame> CaptureAssembler::callerFrames(const std::vector<uint64_t>& ips) const
{
    return callerFramesOf(kernelFrames(ips));
}

std::vector<Frame> CaptureAssembler::withoutBpfFrames(std::vector<Frame> frames) const
{
    bpfFrames_ += dropBpfFrames(frames);
    return frames;
}

std::vector<Frame> CaptureAssembler::callerFramesOf(const std::vector<Frame>& withBpf) const
{
    const std::vector<Frame> all = withoutBpfFrames(withBpf);
    std::vector<Frame> frames;
    // Only the innermost run is skipped: a lock function further out (a
    // caller that itself takes a lock) is part of the call path. Inside the
    // run, a frame with no symbol is a BPF trampoline: with the hold probe's
    // fexit on _raw_spin_lock, the lock function is called from one, and
    // kallsyms may not name it. It is skipped when a named caller follows, so
    // the lock is keyed by that caller and not by the trampoline's address.
    size_t i = 0, unnamed = all.size();
    bool in_lock = false;
    for (; i < all.size(); ++i) {
        const Frame& f = all[i];
        if (!f.function.empty() && isLockInternalFrame(f.function)) {
            in_lock = true;
            continue;
        }
        if (f.function.empty() && in_lock) {
            unnamed = std::min(unnamed, i);
            continue;
        }
        break;
    }
    if (i == all.size())
        i = unnamed; // no named caller after all: keep the unnamed frames rather than nothing
    for (; i < all.size() && frames.size() < options_.stack_depth; ++i)
        frames.push_back(all[i]);
    return frames;
}

std::vector<Frame> CaptureAssembler::userCallerFrames(std::vector<Frame> frames) const
{
    size_t skip = 0;
    while (skip < frames.size() && !frames[skip].function.empty() &&
           isUserLockInternal(frames[skip].function, options_.user_lock_functions))
        ++skip;
    frames.erase(frames.begin(), frames.begin() + static_cast<std::ptrdiff_t>(skip));
    if (frames.size() > options_.stack_depth)
        frames.resize(options_.stack_depth);
    return frames;
}

std::string CaptureAssembler::lockKey(uint64_t lockAddr, const std::string& type,
                                      const std::vector<Frame>& frames) const
{
    if (auto d = symbols_.resolveData(lockAddr); d && d->module.empty())
        return d->offset ? d->name + "+" + hex(d->offset) : d->name;
    return callerLockKey(type, frames.empty() ? nullptr : &frames.front());
}

std::string CaptureAssembler::partitionSuffix(const probes::LockRecord& r) const
{
    std::string s;
    if (options_.per_tgid && r.tgid)
        s += "#" + std::to_string(r.tgid);
    if (options_.per_cgroup && r.cgroup)
        s += "#" + cgroupPath(r.cgroup);
    return s;
}

std::string CaptureAssembler::cgroupPath(uint64_t id) const
{
    std::string path = options_.cgroup_path ? options_.cgroup_path(id) : std::string();
    return path.empty() ? "cgroup#" + std::to_string(id) : path;
}

std::string CaptureAssembler::lockName(uint64_t addr) const
{
    if (auto d = symbols_.resolveData(addr); d && d->module.empty())
        return d->name;
    if (probeNames_)
        if (auto it = probeNames_->find(addr); it != probeNames_->end())
            return it->second;
    return {};
}

uint32_t CaptureAssembler::intern(StackKind kind, std::vector<Frame> frames, Capture& out)
{
    // The format wants at least one frame: a missing stack is a pseudo frame,
    // named the way perf names what it cannot show.
    if (frames.empty())
        frames.push_back(Frame{kNoStackFrame, 0, "", std::nullopt});
    std::vector<std::string> sig;
    sig.reserve(frames.size());
    for (const auto& f : frames)
        sig.push_back(frameSignature(f));
    auto [it, inserted] = stackIds_.try_emplace({int(kind), std::move(sig)}, 0);
    if (inserted) {
        it->second = static_cast<uint32_t>(out.stacks.size()) + 1;
        out.stacks.push_back(Stack{it->second, kind, std::move(frames)});
    }
    return it->second;
}

bool CaptureAssembler::passesFilters(const probes::LockRecord& r, const std::string& key,
                                     const std::vector<Frame>& frames) const
{
    if (!options_.lock_types.empty() && !options_.lock_types.count(r.type) &&
        !options_.lock_types.count(baseLockType(r.type)))
        return false;
    if (!options_.lock_keys.empty() || !options_.lock_addrs.empty()) {
        if (!options_.lock_keys.count(key) && !options_.lock_addrs.count(r.lock_addr) &&
            !(r.lock_addr && options_.lock_keys.count(lockName(r.lock_addr))))
            return false;
    }
    for (const auto& needle : options_.stack_contains) {
        bool found = std::any_of(frames.begin(), frames.end(), [&](const Frame& f) {
            return f.function.str().find(needle) != std::string::npos;
        });
        if (!found)
            return false;
    }
    return true;
}

std::vector<const probes::LockRecord*> CaptureAssembler::canonicalOrder(
    const std::vector<probes::LockRecord>& records)
{
    // The probes' maps are read in hash order, which differs from run to run:
    // a fixed order makes the capture a function of the records alone.
    std::vector<const probes::LockRecord*> ordered;
    ordered.reserve(records.size());
    for (const auto& r : records)
        ordered.push_back(&r);
    auto rank = [](const probes::LockRecord* r) {
        return std::tie(r->lock_addr, r->tgid, r->kstack_id, r->ustack_id, r->flags, r->type);
    };
    std::stable_sort(ordered.begin(), ordered.end(), [&](const auto* a, const auto* b) {
        if (rank(a) != rank(b))
            return rank(a) < rank(b);
        if (a->hist.count() != b->hist.count())
            return a->hist.count() < b->hist.count();
        return a->hist.total() < b->hist.total();
    });
    return ordered;
}

Log2Hist& CaptureAssembler::histOf(Lock& lock, Figure f)
{
    return f == Figure::Wait ? lock.wait : f == Figure::Hold ? lock.hold : lock.acquire;
}

Log2Hist& CaptureAssembler::histOf(LockSite& site, Figure f)
{
    return f == Figure::Wait ? site.wait : f == Figure::Hold ? site.hold : site.acquire;
}

void CaptureAssembler::readKernelRecords(const std::vector<probes::LockRecord>& records, Figure figure,
                                         Capture& out)
{
    for (const probes::LockRecord* rp : canonicalOrder(records)) {
        const probes::LockRecord& r = *rp;
        KernelRecord k{&r, figure, {}, std::nullopt, {}, false};
        if (r.kstack_id >= 0 && kernelStack_) {
            const std::vector<Frame> all = kernelFrames(kernelStack_(r.kstack_id));
            if (takenByOwnProgram(all)) {
                ownLocks_.insert(r.lock_addr);
                out.stats.own_lock_events += r.hist.count();
                continue;
            }
            k.frames = callerFramesOf(all);
            k.callerKey = lockKey(r.lock_addr, r.type, k.frames) + partitionSuffix(r);
        }
        if (r.kstack_id != probes::kStackUnsampled && r.ustack_id >= 0 && userStack_) {
            auto uframes = userStack_(r.ustack_id, r.tgid);
            if (uframes.size() > options_.stack_depth)
                uframes.resize(options_.stack_depth);
            k.userStackId = intern(StackKind::User, std::move(uframes), out);
        }
        kernelRecords_.push_back(std::move(k));
    }
}

CaptureAssembler::LockIdentity CaptureAssembler::identityOf(const probes::LockRecord& r)
{
    return {r.lock_addr, r.tgid, r.cgroup, baseLockType(r.type)};
}

void CaptureAssembler::decideKernelKeys()
{
    std::map<LockIdentity, LockEvidence> evidence;
    // Slow acquisitions are the contended part of the holds, walked whatever
    // the budget: counted again they would pull the key towards contention.
    for (const KernelRecord& k : kernelRecords_)
        if (k.figure != Figure::Acquire)
            evidence[identityOf(*k.r)].add(k.figure == Figure::Hold, k.r->hist.count(),
                                            k.callerKey.empty() ? nullptr : &k.callerKey);
    for (const auto& [id, e] : evidence)
        if (e.anyWalked()) {
            const LockKeyMemory::Key* lately = options_.key_memory ? options_.key_memory->recall(id) : nullptr;
            lockKeys_[id].key = lately ? e.keyKeeping(lately->key) : e.hottestKey();
        }
    // A lock passes a stack filter when one of its walked stacks does; its
    // records with no stack then come along.
    for (KernelRecord& k : kernelRecords_) {
        auto decided = lockKeys_.find(identityOf(*k.r));
        if (k.callerKey.empty() || decided == lockKeys_.end()) // an acquisition whose hold was lost
            continue;
        DecidedKey& d = decided->second;
        k.passes = passesFilters(*k.r, d.key, k.frames);
        d.passed = d.passed || k.passes;
    }
    if (options_.key_memory)
        for (const auto& [id, d] : lockKeys_)
            options_.key_memory->remember(id, d.key, d.passed);
}

const LockKeyMemory::Key* CaptureAssembler::recalledKey(const probes::LockRecord& r) const
{
    return options_.key_memory ? options_.key_memory->recall(identityOf(r)) : nullptr;
}

void CaptureAssembler::fileKernelRecords(Capture& out)
{
    for (KernelRecord& k : kernelRecords_) {
        const probes::LockRecord& r = *k.r;
        const bool walked = !k.callerKey.empty();
        if (!walked && ownLocks_.count(r.lock_addr) > 0) {
            out.stats.own_lock_events += r.hist.count();
            continue;
        }
        std::string key;
        if (auto d = lockKeys_.find(identityOf(r)); d != lockKeys_.end()) {
            if (!(walked ? k.passes : d->second.passed))
                continue;
            key = d->second.key;
        } else if (const LockKeyMemory::Key* lately = recalledKey(r)) {
            if (!lately->passed)
                continue;
            key = lately->key;
        } else {
            // Never walked: named by its address alone (a global symbol, else <type>@unknown).
            key = lockKey(r.lock_addr, r.type, {}) + partitionSuffix(r);
            if (!options_.stack_contains.empty() || !passesFilters(r, key, {}))
                continue; // no stack to test the filter on
        }
        if (r.kstack_id == probes::kStackUnsampled)
            k.frames = {Frame{kNotSampledFrame, 0, "", std::nullopt}};
        const auto [li, si] = addToLock(key, r, k.figure, StackKind::Kernel, std::move(k.frames),
                                        k.userStackId, out);
        if (k.figure == Figure::Wait)
            waitSite_[{r.lock_addr, r.kstack_id, r.tgid, r.cgroup}] = {li, si};
    }
    kernelRecords_.clear();
}

void CaptureAssembler::addUserRecords(const std::vector<probes::LockRecord>& records, Figure figure,
                                      Capture& out)
{
    // User locks are keyed by their user caller alone (no address, no stack budget).
    for (const probes::LockRecord* rp : canonicalOrder(records)) {
        const probes::LockRecord& r = *rp;
        std::vector<Frame> frames;
        if (r.ustack_id >= 0 && userStack_)
            frames = userCallerFrames(userStack_(r.ustack_id, r.tgid));
        std::string key = lockKey(0, r.type, frames) + partitionSuffix(r);
        if (!passesFilters(r, key, frames))
            continue;
        addToLock(key, r, figure, StackKind::User, std::move(frames), std::nullopt, out);
    }
}

std::pair<size_t, size_t> CaptureAssembler::addToLock(const std::string& key, const probes::LockRecord& r,
                                                      Figure figure, StackKind kind, std::vector<Frame> frames,
                                                      std::optional<uint32_t> userStackId, Capture& out)
{
    const uint32_t stackId = intern(kind, std::move(frames), out);
    auto [li, newLock] = lockIndex_.try_emplace(key, out.locks.size());
    if (newLock) {
        Lock l;
        l.key = key;
        l.type = baseLockType(r.type);
        if (options_.per_cgroup && r.cgroup)
            l.cgroup = cgroupPath(r.cgroup);
        out.locks.push_back(std::move(l));
    }
    Lock& lock = out.locks[li->second];
    auto& addrs = lockAddrs_[key];
    if (r.lock_addr)
        addrs.insert(r.lock_addr);
    if (const std::string name = r.lock_addr ? lockName(r.lock_addr) : ""; !name.empty()) {
        auto& names = lockNames_[key];
        if (names.insert(name).second) {
            lock.name.clear();
            for (const auto& n : names)
                lock.name += (lock.name.empty() ? "" : ",") + n;
        }
    }
    lock.instances = static_cast<uint32_t>(std::max<size_t>(addrs.size(), 1));
    if (addrs.size() == 1)
        lock.address = *addrs.begin();
    else
        lock.address.reset();
    histOf(lock, figure).merge(r.hist);
    if (figure == Figure::Wait)
        lock.wait_untimed += r.untimed;

    int64_t siteUser = userStackId ? int64_t(*userStackId) : -1;
    auto [si, newSite] = siteIndex_.try_emplace({key, stackId, siteUser}, lock.sites.size());
    if (newSite) {
        LockSite site;
        site.stack_id = stackId;
        site.user_stack_id = userStackId;
        lock.sites.push_back(std::move(site));
    }
    LockSite& site = lock.sites[si->second];
    histOf(site, figure).merge(r.hist);
    if (figure == Figure::Wait)
        site.wait_untimed += r.untimed;
    return {li->second, si->second};
}

void CaptureAssembler::addHolders(const std::vector<probes::HolderRecord>& records, Capture& out)
{
    // A holder record whose wait was filtered out (or never read) has no site: dropped with it.
    for (const auto& r : records) {
        auto it = waitSite_.find({r.lock_addr, r.wait_kstack_id, r.tgid, r.cgroup});
        // The hold probe sees raw spinlocks only; owners of sleeping locks come from addOwners.
        if (it == waitSite_.end() || out.locks[it->second.first].type != "spinlock")
            continue;
        std::vector<Frame> frames;
        if (r.holder_kstack_id >= 0 && kernelStack_)
            frames = callerFrames(kernelStack_(r.holder_kstack_id));
        const uint32_t stackId = intern(StackKind::Kernel, std::move(frames), out);
        auto& holders = out.locks[it->second.first].sites[it->second.second].holders;
        auto h = std::find_if(holders.begin(), holders.end(),
                              [&](const Holder& x) { return x.stack_id == stackId; });
        if (h == holders.end())
            holders.push_back(Holder{stackId, r.count, r.wait_ns});
        else {
            h->count += r.count;
            h->wait_ns += r.wait_ns;
        }
    }
    for (auto& lock : out.locks)
        for (auto& site : lock.sites)
            std::stable_sort(site.holders.begin(), site.holders.end(),
                             [](const Holder& a, const Holder& b) { return a.wait_ns > b.wait_ns; });
}

void CaptureAssembler::addOwners(const std::vector<probes::OwnerRecord>& records, Capture& out)
{
    // Like holders: an owner record whose wait was filtered out has no site.
    for (const auto& r : records) {
        auto it = waitSite_.find({r.lock_addr, r.wait_kstack_id, r.tgid, r.cgroup});
        if (it == waitSite_.end())
            continue;
        // The whole stack: its leaf is where the owner was (often schedule(), under what it sleeps in).
        const uint32_t stackId = intern(StackKind::Kernel, withoutBpfFrames(kernelFrames(r.owner_stack)), out);
        auto& holders = out.locks[it->second.first].sites[it->second.second].holders;
        auto h = std::find_if(holders.begin(), holders.end(), [&](const Holder& x) {
            return x.stack_id == stackId && x.owner_tid == r.owner_tid;
        });
        if (h == holders.end())
            holders.push_back(Holder{stackId, r.count, r.wait_ns, r.owner_tid, r.owner_comm});
        else {
            h->count += r.count;
            h->wait_ns += r.wait_ns;
        }
    }
}

void CaptureAssembler::assembleCpu(const probes::Snapshot& snapshot, Capture& out)
{
    CpuProfile& cpu = out.cpu;
    cpu.frequency_hz = options_.cpu_frequency_hz;
    cpu.bpf_samples = 0; // counted from here on: none is a count, not a gap
    std::map<std::pair<std::string, std::string>, uint64_t> leaves;
    std::map<uint32_t, uint64_t> perStack;
    uint64_t counted = 0;
    auto addLeaf = [&](const std::vector<Frame>& frames, uint64_t n) {
        counted += n;
        std::string leaf = frames.empty() ? std::string() : frames[0].function.str();
        std::string module = frames.empty() ? std::string() : frames[0].module.str();
        if (!leaf.empty() && isSpinFunction(leaf))
            cpu.lock_samples += n;
        if (!leaf.empty() && isIdleFunction(leaf))
            cpu.idle_samples += n;
        if (runsBpf(frames))
            *cpu.bpf_samples += n;
        leaves[{leaf.empty() ? "[unknown]" : leaf, module}] += n;
    };
    for (const auto& rec : snapshot.cpu) {
        std::vector<Frame> frames;
        if (rec.kstack_id >= 0 && kernelStack_)
            for (uint64_t ip : kernelStack_(rec.kstack_id))
                frames.push_back(kernelFrame(ip));
        if (rec.kstack_id < 0)
            frames.push_back(Frame{kUserModeFrame, 0, "", std::nullopt});
        addLeaf(frames, rec.count);
        perStack[intern(StackKind::Kernel, std::move(frames), out)] += rec.count;
    }
    // Samples the probe could only count by their function: in the shares and
    // leaves, not in the stacks (a one-frame stack would pose as a call path).
    for (const auto& rec : snapshot.cpu_unstacked)
        addLeaf({rec.function ? kernelFrame(rec.function) : Frame{kOtherKernelFrame, 0, "", std::nullopt}},
                rec.count);
    cpu.samples = std::max(snapshot.cpu_samples, counted);
    for (auto& [leaf, n] : leaves)
        cpu.top_leaves.push_back(LeafShare{leaf.first, leaf.second, n});
    std::stable_sort(cpu.top_leaves.begin(), cpu.top_leaves.end(),
                     [](const LeafShare& a, const LeafShare& b) { return a.samples > b.samples; });
    if (cpu.top_leaves.size() > options_.top_leaves)
        cpu.top_leaves.resize(options_.top_leaves);
    for (auto& [id, n] : perStack)
        cpu.stacks.push_back(StackCount{id, n});
}

void CaptureAssembler::assemble(const probes::Snapshot& snapshot, Capture& out)
{
    probeNames_ = &snapshot.lock_names;
    // Every walked kernel stack is read before any lock gets its key.
    readKernelRecords(snapshot.waits, Figure::Wait, out);
    readKernelRecords(snapshot.holds, Figure::Hold, out);
    readKernelRecords(snapshot.acquires, Figure::Acquire, out);
    decideKernelKeys();
    fileKernelRecords(out);
    addUserRecords(snapshot.user_waits, Figure::Wait, out);
    addUserRecords(snapshot.user_holds, Figure::Hold, out);
    addOwners(snapshot.owners, out);
    addHolders(snapshot.holders, out); // sorts every site's holders, owners included
    // Most contended first (total wait, then hold), the order reports start from.
    std::stable_sort(out.locks.begin(), out.locks.end(), [](const Lock& a, const Lock& b) {
        if (a.wait.total() != b.wait.total())
            return a.wait.total() > b.wait.total();
        return a.hold.total() > b.hold.total();
    });
    lockIndex_.clear();
    for (size_t i = 0; i < out.locks.size(); ++i)
        lockIndex_[out.locks[i].key] = i;
    for (const auto& l : snapshot.latencies) {
        LatencyEntry e{l.name, l.hist, l.errors, l.sample_period, l.all_calls};
        (l.is_syscall ? out.syscalls : out.functions).push_back(std::move(e));
    }
    if (options_.cpu_frequency_hz || !snapshot.cpu.empty())
        assembleCpu(snapshot, out);
    const uint64_t own = out.stats.own_lock_events;
    out.stats = snapshot.stats;
    out.stats.own_lock_events = own;
    out.stats.bpf_frames = bpfFrames_;
}

} // namespace lockscope::record
