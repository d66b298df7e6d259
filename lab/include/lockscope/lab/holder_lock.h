// SPDX-License-Identifier: GPL-2.0-or-later
#pragma once

#include <string>

#include "lockscope/lab/error.h"
#include "lockscope/lab/kernel.h"

namespace lockscope::lab {

// A second lab found the directory or build tree in use and was told not to
// wait (`lockscope lab --no-wait`): the message names the holder.
class LabBusy : public LabError {
public:
    using LabError::LabError;
};

// Exit code of a lab that refused to wait for a busy output directory
// (EX_TEMPFAIL: try again later).
constexpr int kLabBusyExitCode = 75;

// What one lab uses alone: its output directory, a cached build tree. An
// exclusive flock(2) on lock_path, so the kernel releases it when the holder
// dies (no stale lock to clean up). The holder writes its pid and command
// line into the file; a second lab names them in its one line, then waits
// (Mode::Wait, saying so through progress) or throws LabBusy (Mode::Refuse).
class HolderLock {
public:
    enum class Mode { Wait, Refuse };
    // what: "output dir 'x'"; hint: how to avoid the wait, ends the line.
    HolderLock(const std::string& lock_path, const std::string& what, Mode mode, const ProgressFn& progress,
               const std::string& hint = "");
    ~HolderLock();
    HolderLock(const HolderLock&) = delete;
    HolderLock& operator=(const HolderLock&) = delete;

    // "pid 123 (lockscope lab -k ...)" from a lock file, or "another process"
    // when it names none.
    static std::string holderOf(const std::string& lock_path);

private:
    int fd_ = -1;
};

} // namespace lockscope::lab
