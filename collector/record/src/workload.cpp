// SPDX-License-Identifier: GPL-2.0-or-later
#include "lockscope/record/workload.h"

#include <cerrno>
#include <csignal>
#include <cstring>
#include <fcntl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

namespace lockscope::record {
namespace {

void closeFd(int& fd) noexcept
{
    if (fd >= 0)
        ::close(fd);
    fd = -1;
}

bool writeAll(int fd, const char* p, size_t n) noexcept
{
    while (n) {
        ssize_t w = ::write(fd, p, n);
        if (w < 0) {
            if (errno == EINTR)
                continue;
            return false;
        }
        p += w;
        n -= size_t(w);
    }
    return true;
}

[[noreturn]] void childFail(int errFd, int err) noexcept
{
    (void)!::write(errFd, &err, sizeof err);
    _exit(127);
}

} // namespace

void ResultScanner::feed(std::string_view bytes)
{
    while (!bytes.empty()) {
        size_t nl = bytes.find('\n');
        if (nl == std::string_view::npos) {
            // Bounded: a workload printing megabytes without a newline is not
            // printing a result line.
            if (partial_.size() < kMaxLine)
                partial_.append(bytes.substr(0, kMaxLine - partial_.size()));
            return;
        }
        if (partial_.empty()) {
            scanLine(bytes.substr(0, nl));
        } else {
            if (partial_.size() < kMaxLine)
                partial_.append(bytes.substr(0, std::min(nl, kMaxLine - partial_.size())));
            scanLine(partial_);
            partial_.clear();
        }
        bytes.remove_prefix(nl + 1);
    }
}

void ResultScanner::finish()
{
    if (!partial_.empty())
        scanLine(partial_);
    partial_.clear();
}

void ResultScanner::scanLine(std::string_view line)
{
    if (line.find("\"lockscope_result\"") == std::string_view::npos)
        return;
    size_t b = line.find_first_not_of(" \t\r");
    if (b == std::string_view::npos || line[b] != '{')
        return;
    auto doc = nlohmann::json::parse(line, nullptr, false);
    if (doc.is_discarded() || !doc.is_object() || !doc.contains("lockscope_result")) {
        warnings_.push_back("workload printed a malformed lockscope_result line (not a JSON object); "
                            "ignored");
        return;
    }
    const auto& payload = doc["lockscope_result"];
    if (!payload.is_object()) {
        warnings_.push_back("workload's lockscope_result is not a JSON object; ignored");
        return;
    }
    for (auto it = payload.begin(); it != payload.end(); ++it)
        results_[it.key()] = it.value();
}

WorkloadProcess::WorkloadProcess(const std::vector<std::string>& argv)
{
    if (argv.empty())
        throw WorkloadError("no workload command given");
    int go[2], err[2], out[2];
    if (::pipe2(go, O_CLOEXEC) != 0)
        throw WorkloadError(std::string("pipe: ") + std::strerror(errno));
    if (::pipe2(err, O_CLOEXEC) != 0) {
        ::close(go[0]);
        ::close(go[1]);
        throw WorkloadError(std::string("pipe: ") + std::strerror(errno));
    }
    if (::pipe2(out, O_CLOEXEC) != 0) {
        for (int fd : {go[0], go[1], err[0], err[1]})
            ::close(fd);
        throw WorkloadError(std::string("pipe: ") + std::strerror(errno));
    }
    std::vector<char*> cargv;
    for (const auto& a : argv)
        cargv.push_back(const_cast<char*>(a.c_str()));
    cargv.push_back(nullptr);

    pid_t pid = ::fork();
    if (pid < 0) {
        int e = errno;
        for (int fd : {go[0], go[1], err[0], err[1], out[0], out[1]})
            ::close(fd);
        throw WorkloadError(std::string("fork: ") + std::strerror(e));
    }
    if (pid == 0) {
        // Child: only async-signal-safe calls from here to exec.
        sigset_t none;
        sigemptyset(&none);
        sigprocmask(SIG_SETMASK, &none, nullptr);
        for (int s : {SIGINT, SIGTERM, SIGPIPE, SIGCHLD, SIGHUP, SIGQUIT})
            signal(s, SIG_DFL);
        if (::dup2(out[1], STDOUT_FILENO) < 0)
            childFail(err[1], errno);
        char c;
        ssize_t r;
        do
            r = ::read(go[0], &c, 1);
        while (r < 0 && errno == EINTR);
        if (r != 1)
            _exit(127);  // the recorder went away before releasing us
        ::execvp(cargv[0], cargv.data());
        childFail(err[1], errno);
    }
    pid_ = pid;
    command_ = argv[0];
    ::close(go[0]);
    ::close(err[1]);
    ::close(out[1]);
    goFd_ = go[1];
    errFd_ = err[0];
    outFd_ = out[0];
    pidFd_ = openPidFd(pid);
}

WorkloadProcess::~WorkloadProcess()
{
    if (pid_ > 0 && !exited_) {
        ::kill(pid_, SIGKILL);
        int st;
        while (::waitpid(pid_, &st, 0) < 0 && errno == EINTR) {
        }
    }
    closeFd(goFd_);
    closeFd(errFd_);
    closeFd(outFd_);
    closeFd(pidFd_);
}

void WorkloadProcess::release()
{
    char c = 'g';
    bool sent = writeAll(goFd_, &c, 1);
    closeFd(goFd_);
    int childErr = 0;
    ssize_t r;
    do
        r = ::read(errFd_, &childErr, sizeof childErr);
    while (r < 0 && errno == EINTR);
    closeFd(errFd_);
    if (r == sizeof childErr || !sent) {
        wait();
        throw WorkloadError("cannot run '" + command_ + "': " +
                            (sent ? std::strerror(childErr) : "it exited before exec") +
                            " (check the command after --)");
    }
}

bool WorkloadProcess::pumpOutput(int teeFd)
{
    if (outFd_ < 0)
        return false;
    char buf[16384];
    ssize_t n = ::read(outFd_, buf, sizeof buf);
    if (n < 0) {
        if (errno == EINTR || errno == EAGAIN)
            return true;
        n = 0;
    }
    if (n == 0) {
        closeFd(outFd_);
        scanner_.finish();
        return false;
    }
    if (teeFd >= 0)
        writeAll(teeFd, buf, size_t(n));
    scanner_.feed(std::string_view(buf, size_t(n)));
    return true;
}

void WorkloadProcess::recordStatus(int status)
{
    exited_ = true;
    if (WIFEXITED(status))
        exitStatus_ = WEXITSTATUS(status);
    else if (WIFSIGNALED(status))
        signal_ = WTERMSIG(status);
}

bool WorkloadProcess::poll()
{
    if (exited_)
        return true;
    int st = 0;
    pid_t r = ::waitpid(pid_, &st, WNOHANG);
    if (r == pid_)
        recordStatus(st);
    return exited_;
}

void WorkloadProcess::wait()
{
    if (exited_)
        return;
    int st = 0;
    pid_t r;
    do
        r = ::waitpid(pid_, &st, 0);
    while (r < 0 && errno == EINTR);
    if (r == pid_)
        recordStatus(st);
    else
        exited_ = true;
}

void WorkloadProcess::kill(int sig) const noexcept
{
    if (pid_ > 0 && !exited_)
        ::kill(pid_, sig);
}

bool processExists(pid_t pid) noexcept
{
    return pid > 0 && (::kill(pid, 0) == 0 || errno == EPERM);
}

int openPidFd(pid_t pid) noexcept
{
#ifdef SYS_pidfd_open
    long fd = ::syscall(SYS_pidfd_open, pid, 0);
    return fd < 0 ? -1 : int(fd);
#else
    (void)pid;
    return -1;
#endif
}

} // namespace lockscope::record
