// SPDX-License-Identifier: GPL-2.0-or-later
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <string>

// Which key one kernel lock (address, tgid, type) gets: the rule that keeps
// a lock's identity independent of stack sampling and of the order the
// probes' records are read in (docs/capture-format.md, "Lock keys").
namespace lockscope::record {

// What the records of one lock said about its callers. Index 0 counts
// waits, 1 holds: the two are walked under separate budgets, so each kind's
// walked share is scaled by its own total.
class LockEvidence {
public:
    // `n` events of one record; `callerKey` is the key its walked stack gave,
    // null for a record whose stack was not walked (or could not be).
    void add(bool hold, uint64_t n, const std::string* callerKey);
    bool anyWalked() const { return !walkedByKey_.empty(); }
    // The key of the lock's hottest walked caller: the most events once each
    // kind's events are shared out in proportion to its walked ones (exact
    // counts when every stack was walked), ties to the smallest key. Empty
    // when no stack was walked.
    std::string hottestKey() const;
    // Read out window by window (lockscope agent): hottestKey(), or the key
    // the lock had lately while that key's walked events are still at least
    // half the hottest one's. Two near-tied callers would otherwise swap the
    // lock's name, and its series, from one window to the next; a caller
    // that falls below half gives the key up.
    std::string keyKeeping(const std::string& lately) const;

private:
    // A key's events: each kind's shared out by the key's part of its walked ones.
    long double estimate(const std::array<uint64_t, 2>& walked) const;

    std::array<uint64_t, 2> events_{};
    std::array<uint64_t, 2> walked_{};
    std::map<std::string, std::array<uint64_t, 2>> walkedByKey_;
};

} // namespace lockscope::record
