// SPDX-License-Identifier: GPL-2.0-or-later
#pragma once

// What `lockscope record` selects and how it samples, as the capture's
// meta.filters says it, and the syntax of its lock selection.

#include <map>
#include <string>
#include <vector>

#include "lockscope/probes/probes.h"
#include "lockscope/record/assemble.h"

namespace lockscope::record {

struct RecordOptions;

// --lock-type and --lock as given (meta.filters keeps the user's spelling).
struct LockSelection {
    std::vector<std::string> types; // spinlock, rwlock:R, mutex, ...
    std::vector<std::string> locks; // a key, a name or 0xADDRESS
};

// Puts the selection into the assembler's filters, and lock addresses into
// the in-kernel filter too. Throws RecordError "'X' is not a hex address".
void selectLocks(const LockSelection& selection, AssembleOptions& assemble, probes::Options& probe);

// meta.filters of a recording with these options.
std::map<std::string, std::string> recordFilters(const RecordOptions& options);

} // namespace lockscope::record
