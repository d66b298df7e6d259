// SPDX-License-Identifier: GPL-2.0-or-later
#include "lockscope/lab/process.h"

#include <atomic>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <poll.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

namespace lockscope::lab {

namespace {

void closeFd(int& fd)
{
    if (fd >= 0) {
        ::close(fd);
        fd = -1;
    }
}

// Process groups of the children running now, for the signal handler.
constexpr int kMaxChildren = 16;
std::atomic<pid_t> g_children[kMaxChildren];

void killChildrenAndDie(int sig)
{
    for (auto& slot : g_children) {
        pid_t pg = slot.load();
        if (pg > 0)
            ::kill(-pg, SIGKILL);
    }
    (void)::signal(sig, SIG_DFL);
    (void)::raise(sig);
}

// Only where nobody chose a disposition: a host program embedding the lab
// keeps its own handlers.
void installFatalSignalHandlers()
{
    static std::atomic<bool> done{false};
    if (done.exchange(true))
        return;
    for (int sig : {SIGINT, SIGTERM, SIGHUP}) {
        struct sigaction old {};
        if (::sigaction(sig, nullptr, &old) == 0 && old.sa_handler == SIG_DFL) {
            struct sigaction sa {};
            sa.sa_handler = killChildrenAndDie;
            sigemptyset(&sa.sa_mask);
            ::sigaction(sig, &sa, nullptr);
        }
    }
}

class ChildSlot {
public:
    explicit ChildSlot(pid_t pgid)
    {
        for (auto& slot : g_children) {
            pid_t expected = 0;
            if (slot.compare_exchange_strong(expected, pgid)) {
                slot_ = &slot;
                return;
            }
        }
    }
    ~ChildSlot()
    {
        if (slot_)
            slot_->store(0);
    }
    ChildSlot(const ChildSlot&) = delete;
    ChildSlot& operator=(const ChildSlot&) = delete;

private:
    std::atomic<pid_t>* slot_ = nullptr;
};

void appendCapped(ProcessResult& result, std::string_view chunk)
{
    result.output.append(chunk);
    if (result.output.size() > kMaxOutputBytes + kMaxOutputBytes / 4) {
        result.output.erase(0, result.output.size() - kMaxOutputBytes);
        result.output_truncated = true;
    }
}

// Only async-signal-safe calls here: the parent may have other threads.
[[noreturn]] void childExec(char* const* args, int out_fd, int err_report_fd, pid_t parent)
{
    ::setpgid(0, 0);
    // A SIGKILLed lab cannot clean up: the kernel does it for us.
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (::getppid() != parent)
        ::_exit(127);
    int devnull = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
    if (devnull >= 0)
        ::dup2(devnull, STDIN_FILENO);
    ::dup2(out_fd, STDOUT_FILENO);
    ::dup2(out_fd, STDERR_FILENO);
    ::execvp(args[0], args);
    int err = errno;
    ssize_t ignored = ::write(err_report_fd, &err, sizeof err);
    (void)ignored;
    ::_exit(127);
}

// The child's output pipe and the pipe on which a failed exec reports its
// errno (close-on-exec: a successful exec closes it, so the parent reads 0
// bytes). Throws, leaving nothing open, when a pipe cannot be made.
struct ChildPipes {
    int out[2] = {-1, -1};
    int err[2] = {-1, -1};

    ChildPipes()
    {
        if (::pipe2(out, O_CLOEXEC) != 0)
            throw std::runtime_error(std::string("pipe: ") + std::strerror(errno));
        if (::pipe2(err, O_CLOEXEC) != 0) {
            ::close(out[0]);
            ::close(out[1]);
            throw std::runtime_error(std::string("pipe: ") + std::strerror(errno));
        }
    }
};

// Forks and execs argv in its own process group. Returns the child's pid;
// the pipes' write ends are the child's.
pid_t startChild(const std::vector<std::string>& argv, const ChildPipes& pipes)
{
    std::vector<char*> args;
    args.reserve(argv.size() + 1);
    for (const auto& a : argv)
        args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    installFatalSignalHandlers();
    pid_t parent = ::getpid();
    pid_t pid = ::fork();
    if (pid < 0) {
        int e = errno;
        for (int fd : {pipes.out[0], pipes.out[1], pipes.err[0], pipes.err[1]})
            ::close(fd);
        throw std::runtime_error(std::string("fork: ") + std::strerror(e));
    }
    if (pid == 0)
        childExec(args.data(), pipes.out[1], pipes.err[1], parent);
    // Also set it from the parent so a kill right after fork cannot miss the group.
    ::setpgid(pid, pid);
    return pid;
}

// An exec that failed wrote its errno before exiting: the result says so.
void readExecError(int& err_fd, const std::string& program, ProcessResult& result)
{
    int exec_errno = 0;
    if (::read(err_fd, &exec_errno, sizeof exec_errno) == static_cast<ssize_t>(sizeof exec_errno)) {
        result.started = false;
        result.output = program + ": " + std::strerror(exec_errno);
    }
    closeFd(err_fd);
}

// The child's output until it closes it, the timeout passes or should_stop
// says so (then its group is killed); closes read_fd.
void collectOutput(int& read_fd, pid_t pid, double timeout_s,
                   const std::function<void(std::string_view)>& on_output,
                   const std::function<bool()>& should_stop, ProcessResult& result)
{
    using Clock = std::chrono::steady_clock;
    const auto deadline = Clock::now() + std::chrono::duration_cast<Clock::duration>(
                                             std::chrono::duration<double>(timeout_s));
    char buf[8192];
    while (read_fd >= 0) {
        auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
        if (left <= 0) {
            result.timed_out = true;
            ::kill(-pid, SIGKILL);
            break;
        }
        if (should_stop && should_stop()) {
            result.stopped = true;
            ::kill(-pid, SIGKILL);
            break;
        }
        pollfd pfd{read_fd, POLLIN, 0};
        int n = ::poll(&pfd, 1, static_cast<int>(std::min<long long>(left, 500)));
        if (n < 0 && errno != EINTR)
            break;
        if (n <= 0)
            continue;
        ssize_t got = ::read(read_fd, buf, sizeof buf);
        if (got < 0 && (errno == EINTR || errno == EAGAIN))
            continue;
        if (got <= 0)
            break;
        std::string_view chunk(buf, static_cast<size_t>(got));
        appendCapped(result, chunk);
        if (on_output)
            on_output(chunk);
    }
    closeFd(read_fd);
}

// Waits for the child, kills what it left in its group, and records how it ended.
void reapChild(pid_t pid, ProcessResult& result)
{
    int status = 0;
    while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    // Anything the child left behind in its group goes too.
    ::kill(-pid, SIGKILL);
    if (WIFEXITED(status))
        result.exit_code = WEXITSTATUS(status);
    else if (WIFSIGNALED(status))
        result.signal = WTERMSIG(status);
}

} // namespace

ProcessResult runProcess(const std::vector<std::string>& argv, double timeout_s,
                         const std::function<void(std::string_view)>& on_output,
                         const std::function<bool()>& should_stop)
{
    ProcessResult result;
    if (argv.empty()) {
        result.started = false;
        result.output = "empty command";
        return result;
    }
    ChildPipes pipes;
    const pid_t pid = startChild(argv, pipes);
    ChildSlot registered(pid);
    int read_fd = pipes.out[0];
    int err_fd = pipes.err[0];
    ::close(pipes.out[1]);
    ::close(pipes.err[1]);
    readExecError(err_fd, argv[0], result);
    collectOutput(read_fd, pid, timeout_s, on_output, should_stop, result);
    reapChild(pid, result);
    return result;
}

std::string shellQuote(std::string_view word)
{
    if (!word.empty() && word.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                                                "0123456789_-./=:,+@%") == std::string_view::npos)
        return std::string(word);
    std::string out = "'";
    for (char c : word) {
        if (c == '\'')
            out += "'\\''";
        else
            out += c;
    }
    out += '\'';
    return out;
}

std::string tailLines(std::string_view text, unsigned lines)
{
    size_t pos = text.size();
    if (pos > 0 && text[pos - 1] == '\n')
        --pos;
    unsigned seen = 0;
    while (pos > 0) {
        if (text[pos - 1] == '\n' && ++seen == lines)
            break;
        --pos;
    }
    return std::string(text.substr(pos));
}

} // namespace lockscope::lab
