// SPDX-License-Identifier: GPL-2.0-or-later
#include "lockscope/record/workload.h"

#include <cerrno>
#include <cstdint>
#include <csignal>
#include <cstring>
#include <fcntl.h>
#include <grp.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
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

// What the child reports through its error pipe before _exit(127).
enum ChildStage : int { kExec = 0, kSwitchUser = 1 };
struct ChildFailure {
    int stage;
    int err;
};

[[noreturn]] void childFail(int errFd, ChildStage stage, int err) noexcept
{
    const ChildFailure f { stage, err };
    (void)!::write(errFd, &f, sizeof f);
    _exit(127);
}

// In the child, so only plain syscalls: the lists were read before fork.
int switchUser(const RunAs& who) noexcept
{
    if (::setgroups(who.groups.size(), who.groups.data()) != 0 || ::setgid(who.gid) != 0 || ::setuid(who.uid) != 0)
        return errno;
    return 0;
}

// The pipes between the recorder and its workload: go releases the child,
// err carries a ChildFailure back, out is the workload's stdout.
struct ChildPipes {
    int go[2] = {-1, -1};
    int err[2] = {-1, -1};
    int out[2] = {-1, -1};

    ChildPipes()
    {
        for (int* p : {go, err, out})
            if (::pipe2(p, O_CLOEXEC) != 0) {
                const int e = errno;
                closeAll();
                throw WorkloadError(std::string("pipe: ") + std::strerror(e));
            }
    }
    ChildPipes(const ChildPipes&) = delete;
    ChildPipes& operator=(const ChildPipes&) = delete;
    ~ChildPipes() { closeAll(); }
    void closeAll() noexcept
    {
        for (int* p : {go, err, out}) {
            closeFd(p[0]);
            closeFd(p[1]);
        }
    }
};

// Hands an fd over to its new owner.
int take(int& fd) noexcept
{
    const int f = fd;
    fd = -1;
    return f;
}

// What the child needs, built before fork: it may not allocate after.
struct ChildExec {
    std::vector<char*> argv;
    std::vector<std::string> env; // the run_as user's, else empty (inherit ours)
    std::vector<char*> envp;
    int stdinFd = -1;             // /dev/null with stdin_null, else -1 (keep ours)
    pid_t parent = ::getpid();

    ChildExec() = default;
    ChildExec(const ChildExec&) = delete;
    ChildExec& operator=(const ChildExec&) = delete;
    ~ChildExec() { closeFd(stdinFd); }
};

// The forked child until exec: only async-signal-safe calls. It waits for the
// recorder to release it (the probes attached), so no event is missed.
[[noreturn]] void runChild(const ChildPipes& p, const ChildExec& x, const WorkloadOptions& options) noexcept
{
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, nullptr);
    for (int s : {SIGINT, SIGTERM, SIGPIPE, SIGCHLD, SIGHUP, SIGQUIT})
        signal(s, SIG_DFL);
    ::setpgid(0, 0);
    if (x.stdinFd >= 0 && ::dup2(x.stdinFd, STDIN_FILENO) < 0)
        childFail(p.err[1], kExec, errno);
    if (::dup2(p.out[1], STDOUT_FILENO) < 0)
        childFail(p.err[1], kExec, errno);
    char c;
    ssize_t r;
    do
        r = ::read(p.go[0], &c, 1);
    while (r < 0 && errno == EINTR);
    if (r != 1)
        _exit(127); // the recorder went away before releasing us
    if (options.run_as)
        if (int e = switchUser(*options.run_as))
            childFail(p.err[1], kSwitchUser, e);
    // After the user switch, which clears it. It fires when the forking
    // thread exits; if that already happened, the signal was missed.
    ::prctl(PR_SET_PDEATHSIG, SIGTERM);
    if (::getppid() != x.parent)
        _exit(127);
    if (options.run_as)
        ::execvpe(x.argv[0], x.argv.data(), x.envp.data());
    else
        ::execvp(x.argv[0], x.argv.data());
    childFail(p.err[1], kExec, errno);
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

WorkloadProcess::WorkloadProcess(const std::vector<std::string>& argv, const WorkloadOptions& options)
{
    if (argv.empty())
        throw WorkloadError("no workload command given");
    ChildPipes p;
    ChildExec x;
    for (const auto& a : argv)
        x.argv.push_back(const_cast<char*>(a.c_str()));
    x.argv.push_back(nullptr);
    if (options.run_as) {
        x.env = environmentFor(*options.run_as);
        for (auto& e : x.env)
            x.envp.push_back(e.data());
        x.envp.push_back(nullptr);
    }
    if (options.stdin_null)
        x.stdinFd = ::open("/dev/null", O_RDONLY | O_CLOEXEC);

    const pid_t pid = ::fork();
    if (pid < 0)
        throw WorkloadError(std::string("fork: ") + std::strerror(errno));
    if (pid == 0)
        runChild(p, x, options);
    // Also here, so that the group exists before anyone signals it.
    ::setpgid(pid, pid);
    pid_ = pid;
    // Seized while it waits for release(): it is traced from its exec on.
    if (options.at_exit && ::ptrace(PTRACE_SEIZE, pid, nullptr, PTRACE_O_TRACEEXIT) == 0)
        atExit_ = options.at_exit;
    command_ = argv[0];
    if (options.run_as)
        uid_ = options.run_as->uid;
    goFd_ = take(p.go[1]); // the child's ends close with p
    errFd_ = take(p.err[0]);
    outFd_ = take(p.out[0]);
    // Draining must never block: a background child may hold the pipe open.
    ::fcntl(outFd_, F_SETFL, ::fcntl(outFd_, F_GETFL) | O_NONBLOCK);
    pidFd_ = openPidFd(pid);
}

WorkloadProcess::~WorkloadProcess()
{
    atExit_ = nullptr; // what it refers to may be gone
    if (pid_ > 0 && !exited_) {
        killGroup(SIGKILL);
        wait();
    }
    closeFd(goFd_);
    closeFd(errFd_);
    closeFd(outFd_);
    closeFd(pidFd_);
}

void WorkloadProcess::release()
{
    char c = 'g';
    // The child may be gone (killed meanwhile): EPIPE, not SIGPIPE.
    auto oldPipe = std::signal(SIGPIPE, SIG_IGN);
    bool sent = writeAll(goFd_, &c, 1);
    (void)std::signal(SIGPIPE, oldPipe);
    closeFd(goFd_);
    ChildFailure failure {};
    ssize_t r;
    do
        r = ::read(errFd_, &failure, sizeof failure);
    while (r < 0 && errno == EINTR);
    closeFd(errFd_);
    if (r == sizeof failure || !sent) {
        wait();
        std::string why = !sent ? "it exited before exec" : std::strerror(failure.err);
        if (sent && failure.stage == kSwitchUser)
            throw WorkloadError("cannot run '" + command_ + "' as uid " + std::to_string(uid_.value_or(0)) + ": " +
                                why + " (--as-root keeps root)");
        throw WorkloadError("cannot run '" + command_ + "': " + why + " (check the command after --)");
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
        closeOutput();
        return false;
    }
    if (teeFd >= 0)
        writeAll(teeFd, buf, size_t(n));
    scanner_.feed(std::string_view(buf, size_t(n)));
    return true;
}

void WorkloadProcess::closeOutput()
{
    if (outFd_ < 0)
        return;
    closeFd(outFd_);
    scanner_.finish();
}

void WorkloadProcess::recordStatus(int status)
{
    exited_ = true;
    if (WIFEXITED(status))
        exitStatus_ = WEXITSTATUS(status);
    else if (WIFSIGNALED(status))
        signal_ = WTERMSIG(status);
}

// A traced child stops at its exit and at every signal it is sent: each
// stop is resumed as if nobody traced it.
void WorkloadProcess::settle(int status)
{
    if (!WIFSTOPPED(status)) {
        recordStatus(status);
        return;
    }
    const int event = status >> 16;
    if (event == PTRACE_EVENT_EXIT) {
        if (atExit_)
            atExit_(pid_);
        ::ptrace(PTRACE_CONT, pid_, nullptr, nullptr);
    } else if (event == PTRACE_EVENT_STOP) {
        const int sig = WSTOPSIG(status);
        if (sig == SIGSTOP || sig == SIGTSTP || sig == SIGTTIN || sig == SIGTTOU)
            ::ptrace(PTRACE_LISTEN, pid_, nullptr, nullptr); // a group stop: stays stopped
        else
            ::ptrace(PTRACE_CONT, pid_, nullptr, nullptr); // woken from it (SIGCONT): runs on
    } else {
        // A signal-delivery stop: deliver it (ptrace takes the signal as its data pointer).
        // NOLINTNEXTLINE(performance-no-int-to-ptr)
        ::ptrace(PTRACE_CONT, pid_, nullptr, reinterpret_cast<void*>(intptr_t(WSTOPSIG(status))));
    }
}

bool WorkloadProcess::poll()
{
    int st = 0;
    while (!exited_ && ::waitpid(pid_, &st, WNOHANG) == pid_)
        settle(st);
    return exited_;
}

void WorkloadProcess::wait()
{
    while (!exited_) {
        int st = 0;
        pid_t r;
        do
            r = ::waitpid(pid_, &st, 0);
        while (r < 0 && errno == EINTR);
        if (r == pid_)
            settle(st);
        else
            exited_ = true;
    }
}

void WorkloadProcess::killGroup(int sig) const noexcept
{
    if (pid_ > 0)
        ::kill(-pid_, sig);
}

void WorkloadProcess::terminate() const noexcept
{
    killGroup(SIGTERM);
    killGroup(SIGCONT);
}

bool WorkloadProcess::groupAlive() const noexcept
{
    return pid_ > 0 && (::kill(-pid_, 0) == 0 || errno == EPERM);
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
