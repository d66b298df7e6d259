// SPDX-License-Identifier: GPL-2.0-or-later
// `lockscope record` never hangs and never loses the capture: a background
// child holding the workload's stdout, a workload ignoring SIGTERM, stop
// signals, a SIGKILLed recorder, stdin closing (the GUI's Stop), `-o -`,
// and the workload running as the sudo user. Real recordings (label bpf).
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <poll.h>
#include <pwd.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <thread>
#include <unistd.h>

#include "lockscope/capture/io.h"
#include "run_process.h"

using namespace record_test;
using lockscope::Capture;

namespace {

const std::string kBin = LOCKSCOPE_BIN;

// Waits for p; a recorder still running after `seconds` is hung: it is
// SIGKILLed and the test fails (no timing is asserted otherwise).
Exit waitOrKill(Process& p, int seconds = 180)
{
    std::atomic<bool> done{false}, hung{false};
    std::thread dog([&] {
        for (int i = 0; i < seconds * 10 && !done; ++i)
            std::this_thread::sleep_for(std::chrono::milliseconds(100));
        if (!done) {
            hung = true;
            p.signal(SIGKILL);
        }
    });
    Exit e = p.wait();
    done = true;
    dog.join();
    EXPECT_FALSE(hung) << "lockscope record hung; killed after " << seconds << " s\n" << e.err;
    return e;
}

// A zombie: the recorder ended (it has not been waited for yet).
bool exited(pid_t pid)
{
    std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
    std::string stat((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    const auto close = stat.rfind(')');
    return close == std::string::npos || stat.compare(close, 4, ") Z ") == 0;
}

// The pid a workload wrote to `file` once it started (the probes are attached by then).
pid_t pidFrom(const std::string& file, Process& recorder)
{
    for (int i = 0; i < 1800; ++i) {
        std::ifstream in(file);
        pid_t pid = 0;
        if (in >> pid && pid > 0)
            return pid;
        if (exited(recorder.pid()))
            break;
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    ADD_FAILURE() << "the workload never started: " << recorder.errSoFar();
    return -1;
}

void killIfAlive(pid_t pid)
{
    if (pid > 0 && ::kill(pid, 0) == 0)
        ::kill(pid, SIGKILL);
}

class RecordStop : public ::testing::Test {
protected:
    void SetUp() override
    {
        if (geteuid() != 0)
            GTEST_SKIP() << "skipped: loading BPF programs needs root (CI runs these as root)";
        dir = tempDir();
        cap = dir + "/c.lockscope.json";
        ::unsetenv("SUDO_UID");
        ::unsetenv("PKEXEC_UID");
    }
    // A workload that says who it is, then waits to be stopped.
    std::vector<std::string> waiter(const std::string& pidFile, const std::vector<std::string>& flags = {})
    {
        std::vector<std::string> argv{kBin, "record", "--no-cpu", "-o", cap};
        argv.insert(argv.end(), flags.begin(), flags.end());
        argv.insert(argv.end(), {"--", "sh", "-c", "echo $$ > " + pidFile + "; exec sleep 1000"});
        return argv;
    }
    std::string dir, cap;
};

} // namespace

TEST_F(RecordStop, BackgroundChildHoldingStdoutReturnsWithTheCapture)
{
    const std::string bgFile = dir + "/bg";
    Process p({kBin, "record", "--no-cpu", "-o", cap, "--", "sh", "-c",
               "sleep 100 & echo $! > " + bgFile + "; echo started"},
              dir, "bg");
    Exit e = waitOrKill(p);
    const pid_t bg = pidFrom(bgFile, p);
    EXPECT_EQ(e.code, 0) << e.err;
    EXPECT_EQ(e.out, "started\n");
    EXPECT_NE(e.err.find("left processes running"), std::string::npos) << e.err;
    ASSERT_TRUE(std::filesystem::exists(cap)) << e.err;
    Capture c = lockscope::readCapture(cap);
    EXPECT_EQ(c.workload.exit_status, 0);
    killIfAlive(bg);
}

TEST_F(RecordStop, DurationSendsSigtermToTheGroupThenSigkill)
{
    const std::string bgFile = dir + "/bg";
    // The shell reports SIGTERM and carries on; its background child dies of it.
    Process p({kBin, "record", "--no-cpu", "-d", "1", "--grace", "1", "-o", cap, "--", "sh", "-c",
               "trap 'echo got-term' TERM; sleep 1000 & echo $! > " + bgFile + "; while :; do sleep 0.2; done"},
              dir, "ignore");
    Exit e = waitOrKill(p);
    const pid_t bg = pidFrom(bgFile, p);
    EXPECT_EQ(e.code, 0) << e.err;
    EXPECT_NE(e.out.find("got-term"), std::string::npos) << "no SIGTERM before SIGKILL: " << e.out;
    Capture c = lockscope::readCapture(cap);
    EXPECT_EQ(c.workload.signal, SIGKILL) << "the workload ignored SIGTERM, so SIGKILL ended it";
    EXPECT_TRUE(waitGone(bg)) << "the workload's background process outlived the recording";
    killIfAlive(bg);
}

TEST_F(RecordStop, HangupAndQuitStopTheWorkloadWithSigterm)
{
    for (int sig : {SIGHUP, SIGQUIT, SIGTERM}) {
        const std::string pidFile = dir + "/pid" + std::to_string(sig);
        Process p(waiter(pidFile), dir, "sig" + std::to_string(sig));
        const pid_t w = pidFrom(pidFile, p);
        p.signal(sig);
        Exit e = waitOrKill(p);
        EXPECT_EQ(e.code, 0) << "signal " << sig << ": " << e.err;
        Capture c = lockscope::readCapture(cap);
        EXPECT_EQ(c.workload.signal, SIGTERM) << "signal " << sig;
        killIfAlive(w);
    }
}

TEST_F(RecordStop, KilledRecorderTakesTheWorkloadWithIt)
{
    const std::string pidFile = dir + "/pid";
    Process p(waiter(pidFile), dir, "killed");
    const pid_t w = pidFrom(pidFile, p);
    ASSERT_GT(w, 0);
    p.signal(SIGKILL);
    p.wait();
    EXPECT_TRUE(waitGone(w)) << "the workload outlived its SIGKILLed recorder";
    killIfAlive(w);
}

TEST_F(RecordStop, ClosingStdinStopsWhenAsked)
{
    const std::string pidFile = dir + "/pid";
    int fds[2];
    ASSERT_EQ(::pipe2(fds, O_CLOEXEC), 0);
    Process p(waiter(pidFile, {"--stop-on-stdin-close"}), dir, "stdin", fds[0]);
    ::close(fds[0]);
    const pid_t w = pidFrom(pidFile, p);
    ::close(fds[1]);
    Exit e = waitOrKill(p);
    EXPECT_EQ(e.code, 0) << e.err;
    Capture c = lockscope::readCapture(cap);
    EXPECT_EQ(c.workload.signal, SIGTERM);
    killIfAlive(w);
}

// Stopped (state T or t: a --user-stacks workload is traced).
bool stoppedState(pid_t pid)
{
    std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
    std::string stat((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    const auto close = stat.rfind(')');
    return close != std::string::npos && close + 2 < stat.size() &&
           (stat[close + 2] == 'T' || stat[close + 2] == 't');
}

// With --user-stacks record traces the workload (to read its symbols as it
// exits); one that stopped itself with SIGSTOP must still die of the stop's
// SIGTERM (sent with SIGCONT), not of the SIGKILL after the grace period.
TEST_F(RecordStop, TracedWorkloadStoppedBySigstopStillEndsOnSigterm)
{
    const std::string pidFile = dir + "/pid";
    std::vector<std::string> argv{kBin, "record", "--no-cpu", "--user-stacks", "--grace", "30", "-o", cap, "--",
                                  "sh", "-c", "echo $$ > " + pidFile + "; kill -STOP $$; exec sleep 1000"};
    Process p(argv, dir, "traced-stop");
    const pid_t w = pidFrom(pidFile, p);
    ASSERT_GT(w, 0);
    for (int i = 0; i < 1800 && !stoppedState(w); ++i)
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
    ASSERT_TRUE(stoppedState(w)) << "the workload never stopped";
    // Lets record take the stop in before it is told to end (either order must work).
    std::this_thread::sleep_for(std::chrono::milliseconds(500));
    p.signal(SIGTERM);
    Exit e = waitOrKill(p);
    EXPECT_EQ(e.code, 0) << e.err;
    Capture c = lockscope::readCapture(cap);
    EXPECT_EQ(c.workload.signal, SIGTERM) << "SIGKILL: the SIGTERM never reached the stopped workload";
    killIfAlive(w);
}

TEST_F(RecordStop, DashWritesTheCaptureToStdoutAndTheWorkloadToStderr)
{
    Exit e = run({kBin, "record", "--no-cpu", "-o", "-", "--", "echo", "from-the-workload"}, dir, "dash");
    ASSERT_EQ(e.code, 0) << e.err;
    EXPECT_NE(e.err.find("from-the-workload"), std::string::npos) << e.err;
    Capture c = lockscope::parseCapture(e.out);
    EXPECT_EQ(c.workload.command.at(0), "echo");
    EXPECT_FALSE(std::filesystem::exists(dir + "/-"));
}

TEST_F(RecordStop, WorkloadRunsAsTheSudoUserWhoOwnsTheCapture)
{
    const passwd* nobody = getpwnam("nobody");
    if (!nobody)
        GTEST_SKIP() << "skipped: no 'nobody' user in the passwd database";
    const uid_t uid = nobody->pw_uid;
    const gid_t gid = nobody->pw_gid;
    ::setenv("SUDO_UID", std::to_string(uid).c_str(), 1);
    ::setenv("SUDO_GID", std::to_string(gid).c_str(), 1);
    Exit e = run({kBin, "record", "--no-cpu", "-o", cap, "--", "id", "-u"}, dir, "sudo");
    Exit root = run({kBin, "record", "--no-cpu", "--as-root", "-o", dir + "/root.json", "--", "id", "-u"}, dir,
                    "asroot");
    ::unsetenv("SUDO_UID");
    ::unsetenv("SUDO_GID");
    ASSERT_EQ(e.code, 0) << e.err;
    EXPECT_EQ(e.out, std::to_string(uid) + "\n");
    struct stat st {};
    ASSERT_EQ(::stat(cap.c_str(), &st), 0);
    EXPECT_EQ(st.st_uid, uid);
    EXPECT_EQ(st.st_gid, gid);
    EXPECT_EQ(st.st_mode & 07777, 0600u);
    ASSERT_EQ(root.code, 0) << root.err;
    EXPECT_EQ(root.out, "0\n") << "--as-root keeps the workload root";
}

// The process filter holds 8192 pids: a workload that forks more processes
// than that over its life must not fill it (exited processes leave it).
TEST_F(RecordStop, ForkHeavyWorkloadDoesNotFillTheProcessFilter)
{
    Exit e = run({kBin, "record", "--no-cpu", "-o", cap, "--", "sh", "-c",
                  "i=0; while [ $i -lt 9000 ]; do /bin/true; i=$((i+1)); done"},
                 dir, "forks");
    ASSERT_EQ(e.code, 0) << e.err;
    Capture c = lockscope::readCapture(cap);
    EXPECT_EQ(c.stats.map_full, 0u) << e.err;
    EXPECT_EQ(e.err.find("map was full"), std::string::npos) << e.err;
}
