// SPDX-License-Identifier: GPL-2.0-or-later
#pragma once

#include <map>
#include <set>
#include <string>
#include <vector>

#include "lockscope/capture/capture.h"

// Assembles a Capture from per-event records, deduplicating stacks, shared
// by the importers.
namespace lockscope::reports::detail {

class CaptureBuilder {
public:
    // Returns the id of a stack with these frames (innermost first).
    uint32_t stackId(const std::vector<Frame>& frames);
    // Adds one event of lock key (instance addr) seen from stack id.
    void addWait(const std::string& key, const std::string& type, uint64_t addr, uint32_t stack, uint64_t wait_ns,
                 bool aborted);
    Lock& lock(const std::string& key, const std::string& type);
    LockSite& site(Lock& lock, uint32_t stack);
    // Moves the stacks and locks into capture (locks in key order).
    void finish(Capture& capture);

private:
    std::map<std::vector<std::tuple<std::string, uint64_t, std::string>>, uint32_t> stackIds_;
    std::vector<Stack> stacks_;
    std::map<std::string, Lock> locks_;
    std::map<std::string, std::set<uint64_t>> addresses_;
};

std::string trim(const std::string& s);

// Strict numbers for the importers: the whole string, digits only (no sign,
// no space, no "0x"), in range; else std::invalid_argument saying what.
uint64_t parseCount(const std::string& s, int base = 10);
// A finite number >= 0 ("12.5", "1e3"); NaN, "inf" and negatives are refused.
double parseNonNegative(const std::string& s);
// The capture an importer built, written to text and checked by the capture
// layer's own reader (UTF-8, every field and cross-reference), as a file
// written from it would be read back; a problem is an ImportError
// "<source>: ...".
Capture validated(const Capture& capture, const std::string& source);

} // namespace lockscope::reports::detail
