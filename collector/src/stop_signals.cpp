// SPDX-License-Identifier: GPL-2.0-or-later
#include "stop_signals.h"

#include <cerrno>
#include <cstring>
#include <string>
#include <sys/signalfd.h>
#include <unistd.h>

#include "lockscope/record/recorder.h"

namespace lockscope::record::detail {

StopSignals::StopSignals()
{
    sigemptyset(&set_);
    for (int s : {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGCHLD})
        sigaddset(&set_, s);
    if (sigprocmask(SIG_BLOCK, &set_, &old_) != 0)
        throw RecordError(std::string("sigprocmask: ") + std::strerror(errno));
    fd_ = signalfd(-1, &set_, SFD_CLOEXEC | SFD_NONBLOCK);
    if (fd_ < 0) {
        int e = errno;
        sigprocmask(SIG_SETMASK, &old_, nullptr);
        throw RecordError(std::string("signalfd: ") + std::strerror(e));
    }
    oldPipe_ = std::signal(SIGPIPE, SIG_IGN);
}

StopSignals::~StopSignals()
{
    ::close(fd_);
    sigprocmask(SIG_SETMASK, &old_, nullptr);
    std::signal(SIGPIPE, oldPipe_);
}

} // namespace lockscope::record::detail
