// SPDX-License-Identifier: GPL-2.0-or-later
#pragma once

#include <functional>
#include <string>
#include <string_view>
#include <vector>

namespace lockscope::lab {

struct ProcessResult {
    int exit_code = -1;     // valid when the process exited
    int signal = 0;         // non-zero when it was killed by a signal
    bool timed_out = false; // we killed it at the deadline
    bool started = true;    // false when exec failed (output says why)
    std::string output;     // stdout and stderr, interleaved as written
    bool ok() const noexcept { return started && !timed_out && signal == 0 && exit_code == 0; }
};

// Runs argv without a shell, stdin from /dev/null, stdout+stderr captured.
// The child leads its own process group so that a timeout kills everything
// it started (qemu's helper threads, a shell pipeline). on_output sees each
// chunk as it arrives, for live progress.
ProcessResult runProcess(const std::vector<std::string>& argv, double timeout_s,
                         const std::function<void(std::string_view)>& on_output = {});

// PATH look-up; "" when not found.
std::string findExecutable(const std::string& name);

// Quotes one word for a POSIX shell (the guest's busybox ash, sh -c on the host).
std::string shellQuote(std::string_view word);

// The last `lines` lines of text (whole text if shorter).
std::string tailLines(std::string_view text, unsigned lines);

} // namespace lockscope::lab
