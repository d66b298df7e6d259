// SPDX-License-Identifier: GPL-2.0-or-later
#pragma once

#include <cstdint>
#include <map>
#include <sys/types.h>

#include "lockscope/capture/capture.h"

// User-space symbolization through libbcc's per-process symbol cache
// (bcc_syms.h). The cache reads /proc/PID/maps when created, so prepare() must
// run while the process is alive; resolving later only needs the ELF files.
namespace lockscope::record {

class UserSymbols {
public:
    UserSymbols() = default;
    UserSymbols(const UserSymbols&) = delete;
    UserSymbols& operator=(const UserSymbols&) = delete;
    ~UserSymbols();

    // Creates (or refreshes, to see later dlopen()s) the cache of a process.
    void prepare(pid_t pid);
    // function + offset + binary path; function "" when unknown. Prepares
    // the process on first use if that was not done.
    Frame resolve(pid_t pid, uint64_t address);

private:
    std::map<pid_t, void*> caches_;
};

} // namespace lockscope::record
