// SPDX-License-Identifier: GPL-2.0-or-later
#pragma once

// What `lockscope record` selects and how it samples, as the capture's
// meta.filters says it, and the syntax of its lock selection.

#include <map>
#include <string>
#include <vector>

#include "lockscope/probes/probes.h"
#include "lockscope/record/assemble.h"
#include "lockscope/record/kallsyms.h"

namespace lockscope::record {

struct RecordOptions;

// --lock-type and --lock as given (meta.filters keeps the user's spelling).
struct LockSelection {
    std::vector<std::string> types; // spinlock, rwlock:R, mutex, ...
    std::vector<std::string> locks; // a key, a name or 0xADDRESS
};

// Puts the selection into the assembler's filters. Throws RecordError "'X'
// is not a hex address".
void selectLocks(const LockSelection& selection, AssembleOptions& assemble);

// The probes' in-kernel lock filter for the selection: the addresses of every
// --lock, when each is a hex address or a global lock's key (rename_lock+0x4)
// that `symbols` resolves; else empty (no in-kernel filter), because a lock
// known only by a caller key or a name is matched after the fact and the
// kernel would drop it. Filtering in the kernel keeps a workload that creates
// thousands of locks from filling the hold map before the selected one is taken.
std::vector<uint64_t> kernelLockFilter(const LockSelection& selection, const KernelSymbols& symbols);

// meta.filters of a recording with these options.
std::map<std::string, std::string> recordFilters(const RecordOptions& options);

} // namespace lockscope::record
