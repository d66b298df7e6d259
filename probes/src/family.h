// SPDX-License-Identifier: GPL-2.0-or-later
#pragma once

// A probe family is one skeleton (or one per backend) with its programs,
// links and result maps. Each is opened by its own factory, which records one
// ProbeStatus per probe whether it attached or not.

#include <memory>
#include <string>
#include <vector>

#include <bpf/libbpf.h>

#include "lockscope/probes/probes.h"
#include "shared_maps.h"

namespace lockscope::probes::detail {

struct FamilyContext {
    const Options& options;
    const SharedMaps& maps;
    std::vector<ProbeStatus>& status;
};

class Family {
public:
    virtual ~Family() = default;
    virtual void read(Snapshot& out) const = 0;
    // Whether drain() can empty the family's maps while attached without
    // losing or doubling events (Session::drain); a family without results
    // says yes.
    virtual bool drainable() const { return false; }
    // What the family aggregated since its last drain, emptying the maps it
    // reads; nothing unless drainable().
    virtual void drain(Snapshot&) { }
    // Takes a stack id to delete at its next drain instead of now (true),
    // when deleting it now could deadlock with the family's programs.
    virtual bool deferForget(int64_t) const { return false; }
    virtual uint64_t recursionMisses() const = 0;
    virtual void detach() = 0;
    // Program fds, for tests and per-event cost measurement.
    virtual std::vector<int> progFds() const = 0;
};

// Owns bpf_links; destroying them detaches.
class Links {
public:
    Links() = default;
    Links(const Links&) = delete;
    Links& operator=(const Links&) = delete;
    ~Links() { clear(); }
    void add(bpf_link* l) { links_.push_back(l); }
    void clear()
    {
        for (bpf_link* l : links_)
            bpf_link__destroy(l);
        links_.clear();
    }
    bool empty() const { return links_.empty(); }

private:
    std::vector<bpf_link*> links_;
};

template <class Skel, void (*Destroy)(Skel*)> struct SkelDeleter {
    void operator()(Skel* s) const { Destroy(s); }
};
template <class Skel, void (*Destroy)(Skel*)>
using SkelPtr = std::unique_ptr<Skel, SkelDeleter<Skel, Destroy>>;

std::unique_ptr<Family> openWait(FamilyContext& ctx);
std::unique_ptr<Family> openFollow(FamilyContext& ctx);
std::unique_ptr<Family> openHold(FamilyContext& ctx);
std::unique_ptr<Family> openSyscalls(FamilyContext& ctx);
std::unique_ptr<Family> openFunctions(FamilyContext& ctx);
std::unique_ptr<Family> openCpu(FamilyContext& ctx);
std::unique_ptr<Family> openUserLocks(FamilyContext& ctx);
// After every family is open: turns the holder scan on if the hold and wait
// probes both attached, and records a "holder_stacks" status either way.
void settleHolderStacks(FamilyContext& ctx);

// Adds the shared counters to what the families read into s: events,
// stacks_unsampled, stack_failures (owner stacks a drain no longer had),
// lost (waits that could not be placed) and stale_holds (user-lock holds of
// threads that exited holding) add up; the per-family-only
// figures (untimed waits and syscalls, own-lock events) stay the
// families'; the rest are the counters'.
void addCounterStats(Snapshot& s, const Snapshot& counters);

} // namespace lockscope::probes::detail
