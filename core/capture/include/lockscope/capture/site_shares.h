// SPDX-License-Identifier: GPL-2.0-or-later
#pragma once

#include <cstdint>
#include <vector>

#include "lockscope/capture/capture.h"

// A lock's call paths with its unwalked events shared out. Under the stack
// budget most of a hot lock's waits are counted and timed but not walked:
// the capture keeps them under one [stack not sampled] site. The walked
// events are a fair sample of the lock's events (probes/bpf/stack_budget.bpf.h
// draws them at random), so every view of call paths (call trees, flame
// graphs, path tables, exports, the comparison) gives each walked site its
// share of the unwalked ones, kind by kind (waits, holds, acquires; count and time
// apart), in proportion to what it walked. Its paths then add up to the
// lock's exact totals. The one place that rule lives.
namespace lockscope {

// A stack that is the [stack not sampled] pseudo frame.
bool isNotSampledStack(const Stack* stack) noexcept;

// One site with its share added.
struct SiteShare {
    const LockSite* site = nullptr;  // the capture's site (holders, user stack)
    uint32_t stack_id = 0;
    uint64_t waits = 0, wait_ns = 0;
    uint64_t holds = 0, hold_ns = 0;
    // Slow spin acquisitions (record --hold), shared out like the holds.
    uint64_t acquires = 0, acquire_ns = 0;
    // The weight a call tree or path table gives the site: waits, or holds
    // for a site that only held (LockSite's count rule).
    uint64_t count() const noexcept { return waits ? waits : holds; }
};

// How much of one kind was walked, for "shares from 5,087 walked of 775,912".
struct WalkedShare {
    uint64_t walked = 0;  // events on the sites that received shares
    uint64_t all = 0;     // walked + shared out
    bool sampled() const noexcept { return all > walked; }
    // Half-width of a 95% interval on any one path's share of this kind,
    // 0..1: the worst case (share 1/2) of a sample of `walked` out of `all`
    // drawn without replacement. 0 when every event was walked.
    double shareUncertainty() const noexcept;
};

struct LockShares {
    // The lock's sites in order, each with its share; the [stack not
    // sampled] site is left out when all of it was shared, else it keeps
    // what no walked site could take (a kind none of them walked).
    std::vector<SiteShare> sites;
    WalkedShare waits, holds;
};

LockShares shareOutUnsampled(const Lock& lock, const StackIndex& index);

// A site's own figures, before any share (what shareOutUnsampled starts from).
SiteShare ownShare(const LockSite& site);
// The same on a lock's sites given as their own figures, in the lock's site
// order: a comparison pools the sites of many runs so, without their
// histograms (SiteShare::site may then be null).
LockShares shareOutUnsampled(std::vector<SiteShare> sites, const StackIndex& index);

// The owner kind: a lock's holders (record --lock-owner, --holder-stacks)
// over all its sites. An owner of a wait that was not walked is named
// without its stack (Stats::owner_stacks_unsampled); those are shared out
// over the holders with a stack in proportion (count and wait apart), and
// stay, stackless, only when no holder has one.
struct HolderShares {
    std::vector<Holder> holders;
    WalkedShare owners;  // waits charged to holders with a stack, of all charged
};
HolderShares shareOutHolders(const Lock& lock, const StackIndex& index);

} // namespace lockscope
