// SPDX-License-Identifier: GPL-2.0-or-later
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <sys/types.h>
#include <vector>

#include <nlohmann/json.hpp>

#include "lockscope/record/run_as.h"

// The command `lockscope record -- CMD ARGS` runs: forked, held before exec
// until the recorder has put its pid into the in-kernel filter, its stdout
// passed through to ours while scanned for a {"lockscope_result": {...}} line.
namespace lockscope::record {

class WorkloadError : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

// Collects the payload of every line that is a JSON object with a
// "lockscope_result" member; later lines add to (and override) earlier keys.
class ResultScanner {
public:
    void feed(std::string_view bytes);
    void finish();  // a last line without a newline
    const nlohmann::json& results() const noexcept { return results_; }
    // One line per malformed result line, for the user.
    const std::vector<std::string>& warnings() const noexcept { return warnings_; }

private:
    void scanLine(std::string_view line);
    std::string partial_;
    nlohmann::json results_ = nlohmann::json::object();
    std::vector<std::string> warnings_;
    static constexpr size_t kMaxLine = 1 << 20;
};

struct WorkloadOptions {
    std::optional<RunAs> run_as;  // switch to this user before exec
    bool stdin_null = false;      // stdin from /dev/null instead of ours
    // Called with the pid when the workload's main thread exits, before its
    // memory map is torn down (/proc/PID/maps still reads): the workload is
    // traced (PTRACE_SEIZE, PTRACE_O_TRACEEXIT) and waits at its exit until
    // poll() or wait() ran this. Unset, or where ptrace is refused: not traced.
    std::function<void(pid_t)> at_exit;
};

// The workload is the leader of its own process group, so that stopping it
// reaches whatever it started; it gets SIGTERM when the thread that forked
// it exits (PR_SET_PDEATHSIG), so construct it on a thread that lives as
// long as the recording (the main thread).
class WorkloadProcess {
public:
    // Forks the child, which waits for release() before it execs. argv[0] is
    // looked up in PATH. Throws WorkloadError when fork or pipes fail.
    explicit WorkloadProcess(const std::vector<std::string>& argv, const WorkloadOptions& options = {});
    WorkloadProcess(const WorkloadProcess&) = delete;
    WorkloadProcess& operator=(const WorkloadProcess&) = delete;
    ~WorkloadProcess();

    pid_t pid() const noexcept { return pid_; }
    // Lets the child exec and waits until it did; throws WorkloadError with
    // "cannot run 'CMD': <errno text>" when exec (or switching user) failed
    // (the child is reaped).
    void release();

    // Readable when the child writes to stdout; -1 after end of file.
    int outputFd() const noexcept { return outFd_; }
    // Reads what is available, copies it to teeFd (-1: nowhere) and scans it.
    // Returns false at end of file.
    bool pumpOutput(int teeFd);
    // Stops reading before end of file (a background process of the workload
    // still holds its stdout); the last partial line is scanned.
    void closeOutput();
    // Readable when the child has exited (a pidfd); -1 if unsupported.
    int exitFd() const noexcept { return pidFd_; }

    // Non-blocking reap; true once the child has exited (status recorded).
    // A traced child's stops are serviced here: it gets its signals as if
    // untraced, stays stopped on SIGSTOP, and runs at_exit at its exit.
    bool poll();
    // Blocking reap (servicing stops as poll() does).
    void wait();
    // Whether at_exit will run: the child is traced.
    bool traced() const noexcept { return bool(atExit_); }
    bool exited() const noexcept { return exited_; }
    // Signals the whole process group (also after the leader exited).
    void killGroup(int sig) const noexcept;
    // SIGTERM then SIGCONT to the group: a stopped process sees the SIGTERM too.
    void terminate() const noexcept;
    // True while some process of the group is alive (the leader unreaped counts).
    bool groupAlive() const noexcept;

    std::optional<int> exitStatus() const noexcept { return exitStatus_; }
    std::optional<int> termSignal() const noexcept { return signal_; }
    ResultScanner& scanner() noexcept { return scanner_; }

private:
    void recordStatus(int status);
    void settle(int status);
    pid_t pid_ = -1;
    std::function<void(pid_t)> atExit_;
    std::string command_;
    std::optional<uid_t> uid_;
    int goFd_ = -1, errFd_ = -1, outFd_ = -1, pidFd_ = -1;
    bool exited_ = false;
    std::optional<int> exitStatus_, signal_;
    ResultScanner scanner_;
};

// True while a process exists (kill(pid, 0) semantics, EPERM counts as alive).
bool processExists(pid_t pid) noexcept;
// A pidfd for an existing process, or -1.
int openPidFd(pid_t pid) noexcept;

} // namespace lockscope::record
