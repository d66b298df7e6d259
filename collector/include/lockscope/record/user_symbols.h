// SPDX-License-Identifier: GPL-2.0-or-later
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <sys/types.h>
#include <vector>

#include "lockscope/capture/capture.h"

// User-space symbolization through libbcc's per-process symbol cache
// (bcc_syms.h). The cache reads /proc/PID/maps when created, so prepare() must
// run while the process is alive; resolving later only needs the ELF files.
//
// Bounded for long system-wide recordings: at most maxCaches processes keep a
// cache. A process that exited is retire()d with the addresses of its stacks,
// which are resolved then and kept as frames; when the limit is reached the
// least recently used cache is dropped (a live process gets a new one on its
// next resolve, an exited one that was never retired loses its names).
namespace lockscope::record {

class UserSymbols {
public:
    static constexpr size_t kDefaultMaxCaches = 128;

    explicit UserSymbols(size_t maxCaches = kDefaultMaxCaches);
    UserSymbols(const UserSymbols&) = delete;
    UserSymbols& operator=(const UserSymbols&) = delete;
    ~UserSymbols();

    // Creates (or refreshes, to see later dlopen()s) the cache of a process.
    void prepare(pid_t pid);
    // The process is about to exit with its memory map still in place: its
    // cache is created or refreshed one last time and then kept as it is
    // (a refresh once it exited would read an empty map).
    void prepareLastTime(pid_t pid);
    // function + offset + binary path; function "" when unknown. Prepares
    // the process on first use if that was not done.
    Frame resolve(pid_t pid, uint64_t address);
    // The process has exited: resolves its stacks' addresses now, keeps the
    // frames and frees its cache. Later resolves of other addresses of it
    // give unresolved frames.
    void retire(pid_t pid, const std::vector<uint64_t>& addresses);
    // Frees everything kept for processes that have exited, caches and
    // retired frames alike: for a reader that names stacks while their
    // process lives (lockscope agent), not after (record's retire).
    void forgetExited();

    // Why user stacks cannot be symbolized (libbcc missing), "" when they can.
    // Loads libbcc on first call.
    static const std::string& unavailable();

    size_t cachedProcesses() const noexcept { return caches_.size(); }
    // Whether addresses of pid can still be named once it exits: its cache
    // or frames retired with it are kept.
    bool knows(pid_t pid) const
    {
        const auto r = retired_.find(pid);
        return caches_.count(pid) || (r != retired_.end() && !r->second.empty());
    }
    // Caches dropped at the limit whose process had already exited.
    uint64_t lostExited() const noexcept { return lostExited_; }

private:
    struct Cache {
        void* syms = nullptr;
        uint64_t lastUse = 0;
        bool final = false; // see prepareLastTime
    };
    Frame lookup(void* syms, uint64_t address) const;
    void dropLeastRecentlyUsed();

    size_t maxCaches_;
    uint64_t clock_ = 0;
    uint64_t lostExited_ = 0;
    std::map<pid_t, Cache> caches_;
    std::map<pid_t, std::map<uint64_t, Frame>> retired_;
};

} // namespace lockscope::record
