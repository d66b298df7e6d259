// SPDX-License-Identifier: GPL-2.0-or-later
#pragma once
// Reading the lock-owner maps of the wait probe (Options::lock_owner).
#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

#include "lockscope/probes/probes.h"
#include "lockscope_bpf.h"

namespace lockscope::probes::detail {

struct OwnerMapFds {
    int owners = -1;       // ls_owner_key -> ls_holder_val
    int owner_stacks = -1; // stack hash -> ls_owner_stack
    int owner_comms = -1;  // tid -> ls_owner_comm
};

// Per-window reads of the owner maps for a reader that never stops
// (Session::drain). An owner entry names its stack and task name by keys
// into two more maps, which the programs fill at a wait's begin and charge
// at its end, a window or more later: those are moved here each drain (so
// the kernel's maps only hold what is new) and kept while recent, and
// drained entries are resolved here.
class OwnerDrain {
public:
    // What was charged since the previous drain. gen is the programs'
    // owner_gen (mmapped .bss); parked: the ended waits not charged yet,
    // whose stacks and names must outlive this drain.
    std::vector<OwnerRecord> drain(const OwnerMapFds& fds, volatile uint32_t* gen,
        const std::vector<ls_wait_done>& parked);
    // A wait's histogram and owner entry are charged together but drained
    // one after the other, so a wait charged in between has its owner in
    // this window and its histogram in the next. A capture files an owner
    // under its wait's site: owners whose wait has no record in waits are
    // held back for the next drain (at most kHoldDrains, all of them when
    // final: nothing is charged any more).
    void matchWaits(std::vector<OwnerRecord>& owners, const std::vector<LockRecord>& waits, bool final);
    // Owner entries whose stack had left the cache before they were charged
    // (a wait longer than kKeepDrains windows): named without their stack.
    uint64_t stacksLost() const { return stacksLost_; }

    // The stack and name moved here, for a snapshot read after drains.
    const std::vector<uint64_t>* stack(uint64_t key) const;
    const std::string* comm(uint32_t tid) const;

    // A stack or name unseen (not moved, not named by a drained entry or a
    // parked wait) for this many drains is forgotten; beyond kMaxKept of
    // either, the least recently seen go first.
    static constexpr uint64_t kKeepDrains = 60;
    static constexpr size_t kMaxKept = 65536;
    static constexpr uint32_t kHoldDrains = 2;

private:
    template <class T> struct Kept {
        T value;
        uint64_t seen = 0;
    };
    void moveIn(const OwnerMapFds& fds);
    void forgetOld();

    std::unordered_map<uint64_t, Kept<std::vector<uint64_t>>> stacks_;
    std::unordered_map<uint32_t, Kept<std::string>> comms_;
    std::vector<std::pair<OwnerRecord, uint32_t>> held_; // held back, drains so far
    uint64_t drains_ = 0;
    uint64_t stacksLost_ = 0;
};

// The owners map plus the ended waits not yet drained into it (read after
// detach, they are exact), each with its owner's name and stack (looked up
// in moved, when given, if the kernel's maps no longer hold it).
std::vector<OwnerRecord> readOwners(const OwnerMapFds& fds, const std::vector<ls_wait_done>& undrained,
    const OwnerDrain* moved = nullptr);

} // namespace lockscope::probes::detail
