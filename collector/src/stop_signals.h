// SPDX-License-Identifier: GPL-2.0-or-later
#pragma once

#include <csignal>

namespace lockscope::record::detail {

// Blocks the stop signals (SIGINT, SIGTERM, SIGHUP, SIGQUIT) and SIGCHLD and
// reads them from a signalfd, so that nothing runs in a signal handler;
// ignores SIGPIPE (a closed stdout, | head, must not kill the recorder before
// it writes). Restores both on scope exit. Throws RecordError.
class StopSignals {
public:
    StopSignals();
    ~StopSignals();
    StopSignals(const StopSignals&) = delete;
    StopSignals& operator=(const StopSignals&) = delete;
    int fd() const { return fd_; }

private:
    sigset_t set_{}, old_{};
    int fd_ = -1;
    void (*oldPipe_)(int) = SIG_DFL;
};

} // namespace lockscope::record::detail
