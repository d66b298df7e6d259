// SPDX-License-Identifier: GPL-2.0-or-later
#pragma once

#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "lockscope/util/executable.h"

namespace lockscope::lab {

struct ProcessResult {
    int exit_code = -1;     // valid when the process exited
    int signal = 0;         // non-zero when it was killed by a signal
    bool timed_out = false; // we killed it at the deadline
    bool started = true;    // false when exec failed (output says why)
    bool stopped = false;   // should_stop asked for it: killed
    bool output_truncated = false;  // output holds only the last kMaxOutputBytes
    std::string output;     // stdout and stderr, interleaved as written
    bool ok() const noexcept { return started && !timed_out && !stopped && signal == 0 && exit_code == 0; }
};

// A chatty guest or build must not fill the host's memory: output beyond
// this keeps only its tail (what failure messages show).
constexpr size_t kMaxOutputBytes = 32u << 20;

// Runs argv without a shell, stdin from /dev/null, stdout+stderr captured.
// The child leads its own process group so that a timeout kills everything
// it started (qemu's helper threads, a shell pipeline). It dies with us:
// PR_SET_PDEATHSIG covers a killed lab, and SIGINT/SIGTERM/SIGHUP (when
// nobody else handles them) kill the running children's groups before the
// lab itself ends, so Ctrl-C never leaves a qemu or a compiler behind.
// on_output sees each chunk as it arrives, for live progress; should_stop is
// asked about twice a second and ends the process group when it says so.
ProcessResult runProcess(const std::vector<std::string>& argv, double timeout_s,
                         const std::function<void(std::string_view)>& on_output = {},
                         const std::function<bool()>& should_stop = {});

using lockscope::util::findExecutable; // lockscope/util/executable.h

// Quotes one word for a POSIX shell (the guest's busybox ash, sh -c on the host).
std::string shellQuote(std::string_view word);

// The last `lines` lines of text (whole text if shorter).
std::string tailLines(std::string_view text, unsigned lines);

} // namespace lockscope::lab
