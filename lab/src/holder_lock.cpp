// SPDX-License-Identifier: GPL-2.0-or-later
#include "lockscope/lab/holder_lock.h"

#include <cerrno>
#include <csignal>
#include <fcntl.h>
#include <fstream>
#include <iterator>
#include <sstream>
#include <sys/file.h>
#include <unistd.h>

#include "lockscope/util/error_text.h"

namespace lockscope::lab {

namespace {

constexpr size_t kMaxCommandChars = 160;

// This process's command line, arguments joined by spaces, shortened.
std::string ownCommand()
{
    std::ifstream in("/proc/self/cmdline", std::ios::binary);
    std::string raw((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    while (!raw.empty() && raw.back() == '\0')
        raw.pop_back();
    for (char& c : raw)
        if (c == '\0' || c == '\n')
            c = ' ';
    if (raw.size() > kMaxCommandChars)
        raw = raw.substr(0, kMaxCommandChars - 3) + "...";
    return raw;
}

bool alive(pid_t pid) { return pid > 0 && (::kill(pid, 0) == 0 || errno == EPERM); }

// The holder writes its line just after taking the lock: a waiter that reads
// in between sees an empty file or the line of a holder now dead; it looks
// again for a moment.
std::string holderLine(const std::string& lock_path)
{
    std::string line;
    for (int attempt = 0; attempt < 10; ++attempt) {
        std::ifstream in(lock_path);
        std::getline(in, line);
        pid_t pid = 0;
        std::istringstream(line) >> pid;
        if (alive(pid))
            return line;
        ::usleep(20000);
    }
    return line;
}

} // namespace

std::string HolderLock::holderOf(const std::string& lock_path)
{
    const std::string line = holderLine(lock_path);
    auto space = line.find(' ');
    if (line.empty() || space == std::string::npos)
        return "another process";
    return "pid " + line.substr(0, space) + " (" + line.substr(space + 1) + ")";
}

HolderLock::HolderLock(const std::string& lock_path, const std::string& what, Mode mode, const ProgressFn& progress,
                       const std::string& hint)
{
    fd_ = ::open(lock_path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
    if (fd_ < 0)
        throw LabError("cannot open the lock file '" + lock_path + "': " + util::errnoText(errno));
    if (::flock(fd_, LOCK_EX | LOCK_NB) != 0) {
        if (errno != EWOULDBLOCK) {
            const int err = errno;
            ::close(fd_);
            throw LabError("cannot lock '" + lock_path + "': " + util::errnoText(err));
        }
        const std::string busy = what + " is in use by " + holderOf(lock_path);
        if (mode == Mode::Refuse) {
            ::close(fd_);
            throw LabBusy(busy + (hint.empty() ? "" : ": " + hint));
        }
        if (progress)
            progress(busy + ": waiting for it to finish");
        // A signal ends the lab (process.cpp's handlers), so a plain blocking
        // wait cannot outlive a Ctrl-C.
        int rc;
        while ((rc = ::flock(fd_, LOCK_EX)) != 0 && errno == EINTR) {
        }
        if (rc != 0) {
            const int err = errno;
            ::close(fd_);
            throw LabError("cannot lock '" + lock_path + "': " + util::errnoText(err));
        }
    }
    const std::string line = std::to_string(::getpid()) + " " + ownCommand() + "\n";
    if (::ftruncate(fd_, 0) != 0 || ::pwrite(fd_, line.data(), line.size(), 0) != static_cast<ssize_t>(line.size())) {
        // The lock holds regardless; a waiter then names "another process".
    }
}

HolderLock::~HolderLock()
{
    if (fd_ >= 0)
        ::close(fd_);
}

} // namespace lockscope::lab
