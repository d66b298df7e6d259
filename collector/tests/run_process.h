// SPDX-License-Identifier: GPL-2.0-or-later
#pragma once

#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <stdexcept>
#include <fcntl.h>
#include <fstream>
#include <optional>
#include <poll.h>
#include <spawn.h>
#include <sstream>
#include <string>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>
#include <vector>

#include <gtest/gtest.h>

extern char** environ;

// Runs lockscope (or perf) as a child with stdout/stderr in files, the way a
// user would from a shell, so the tests check the real exit codes and lines.
namespace record_test {

struct Exit {
    int code = -1;     // exit status, or -1 when killed
    int signal = 0;
    std::string out, err;
};

inline std::string slurp(const std::string& path)
{
    std::ifstream in(path);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

class Process {
public:
    // stdinFd: the child's stdin (-1: /dev/null); cwd: its working
    // directory (empty: ours).
    Process(const std::vector<std::string>& argv, const std::string& dir, const std::string& tag, int stdinFd = -1,
            const std::string& cwd = {})
        : outPath_(dir + "/" + tag + ".out"), errPath_(dir + "/" + tag + ".err")
    {
        posix_spawn_file_actions_t fa;
        posix_spawn_file_actions_init(&fa);
        if (!cwd.empty())
            posix_spawn_file_actions_addchdir_np(&fa, cwd.c_str());
        if (stdinFd >= 0)
            posix_spawn_file_actions_adddup2(&fa, stdinFd, 0);
        else
            posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
        posix_spawn_file_actions_addopen(&fa, 1, outPath_.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
        posix_spawn_file_actions_addopen(&fa, 2, errPath_.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
        std::vector<char*> args;
        for (const auto& a : argv)
            args.push_back(const_cast<char*>(a.c_str()));
        args.push_back(nullptr);
        if (posix_spawnp(&pid_, args[0], &fa, nullptr, args.data(), environ) != 0)
            pid_ = -1;
        posix_spawn_file_actions_destroy(&fa);
    }
    ~Process()
    {
        if (pid_ > 0 && !done_) {
            ::kill(pid_, SIGKILL);
            wait();
        }
    }
    pid_t pid() const { return pid_; }
    void signal(int sig) const { ::kill(pid_, sig); }
    std::string errSoFar() const { return slurp(errPath_); }
    Exit wait()
    {
        Exit e;
        int st = 0;
        while (pid_ > 0 && waitpid(pid_, &st, 0) < 0 && errno == EINTR) {
        }
        done_ = true;
        if (WIFEXITED(st))
            e.code = WEXITSTATUS(st);
        else if (WIFSIGNALED(st))
            e.signal = WTERMSIG(st);
        e.out = slurp(outPath_);
        e.err = slurp(errPath_);
        return e;
    }

private:
    std::string outPath_, errPath_;
    pid_t pid_ = -1;
    bool done_ = false;
};

inline Exit run(const std::vector<std::string>& argv, const std::string& dir, const std::string& tag)
{
    Process p(argv, dir, tag);
    return p.wait();
}

// Like run(), with the child working in dir, so that any file it writes
// under a relative or default name lands there for the test to look at.
inline Exit runIn(const std::vector<std::string>& argv, const std::string& dir, const std::string& tag)
{
    Process p(argv, dir, tag, -1, dir);
    return p.wait();
}

// Scratch directories are removed when the test program ends, unless a test
// failed: then they stay (named on stderr) with the captures and the child's
// stdout/stderr files to look at.
class ScratchDirs {
public:
    ScratchDirs() = default;
    ScratchDirs(const ScratchDirs&) = delete;
    ScratchDirs& operator=(const ScratchDirs&) = delete;
    ~ScratchDirs()
    {
        const bool passed = ::testing::UnitTest::GetInstance()->Passed();
        for (const auto& d : dirs_) {
            std::error_code ec;
            if (passed)
                std::filesystem::remove_all(d, ec);
            else
                std::fprintf(stderr, "kept for inspection: %s\n", d.c_str());
        }
    }
    void add(std::string d) { dirs_.push_back(std::move(d)); }

private:
    std::vector<std::string> dirs_;
};

inline std::string tempDir()
{
    // Constructed after gtest's UnitTest (first used inside a test), so
    // destroyed before it.
    static ScratchDirs dirs;
    char tmpl[] = "/tmp/lockscope-record-test-XXXXXX";
    const char* d = mkdtemp(tmpl);
    if (!d)
        throw std::runtime_error(std::string("mkdtemp: ") + std::strerror(errno));
    dirs.add(d);
    return d;
}

// Blocks until pid (not necessarily our child) is gone; false if it still
// lives after a minute (a bug: a test asserts on it rather than hang).
inline bool waitGone(pid_t pid)
{
    const long fd = ::syscall(SYS_pidfd_open, pid, 0);
    if (fd < 0)
        return ::kill(pid, 0) != 0;
    pollfd p{int(fd), POLLIN, 0};
    const int r = ::poll(&p, 1, 60000);
    ::close(int(fd));
    return r == 1;
}

inline size_t lineCount(const std::string& s)
{
    size_t n = 0;
    for (char c : s)
        n += c == '\n';
    return n + (!s.empty() && s.back() != '\n');
}

} // namespace record_test
