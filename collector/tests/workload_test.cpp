// SPDX-License-Identifier: GPL-2.0-or-later
#include <gtest/gtest.h>

#include <csignal>
#include <fstream>
#include <poll.h>
#include <unistd.h>

#include "lockscope/record/workload.h"

using namespace lockscope::record;

namespace {

std::string exeOf(pid_t pid)
{
    char buf[4096];
    ssize_t n = readlink(("/proc/" + std::to_string(pid) + "/exe").c_str(), buf, sizeof buf - 1);
    return n > 0 ? std::string(buf, size_t(n)) : std::string();
}

// Runs the workload to completion, collecting what it printed.
std::string drain(WorkloadProcess& w)
{
    int fds[2];
    EXPECT_EQ(pipe(fds), 0);
    std::string out;
    char buf[4096];
    while (w.outputFd() >= 0) {
        pollfd p{w.outputFd(), POLLIN, 0};
        ::poll(&p, 1, -1);
        w.pumpOutput(fds[1]);
        // Tee went to our pipe; read it back without blocking forever.
        pollfd q{fds[0], POLLIN, 0};
        while (::poll(&q, 1, 0) > 0) {
            ssize_t n = read(fds[0], buf, sizeof buf);
            if (n <= 0)
                break;
            out.append(buf, size_t(n));
        }
    }
    close(fds[0]);
    close(fds[1]);
    w.wait();
    return out;
}

} // namespace

TEST(ResultScanner, ParsesResultLinesAcrossChunks)
{
    ResultScanner s;
    s.feed("ops: 12\n{\"lockscope_res");
    s.feed("ult\": {\"ops_per_sec\": 1234.5, \"threads\": 8}}\nmore text\n");
    s.feed("  {\"lockscope_result\": {\"threads\": 16, \"total_ops\": 99}}");
    s.finish();
    EXPECT_EQ(s.results()["ops_per_sec"], 1234.5);
    EXPECT_EQ(s.results()["threads"], 16);  // later line wins
    EXPECT_EQ(s.results()["total_ops"], 99);
    EXPECT_TRUE(s.warnings().empty());
}

TEST(ResultScanner, MalformedResultLinesWarnOnce)
{
    ResultScanner s;
    s.feed("{\"lockscope_result\": {\"ops\": }\n");
    s.feed("{\"lockscope_result\": 5}\n");
    s.feed("text mentioning \"lockscope_result\" is ignored\n");
    EXPECT_TRUE(s.results().empty());
    EXPECT_EQ(s.warnings().size(), 2u);
}

TEST(Workload, HeldBeforeExecThenRunsAndTeesOutput)
{
    WorkloadProcess w({"sh", "-c", "echo hello; echo '{\"lockscope_result\": {\"ops\": 5}}'; exit 3"});
    // Until release() the child is still this test binary, blocked on the handshake.
    EXPECT_EQ(exeOf(w.pid()), exeOf(getpid()));
    w.release();
    std::string out = drain(w);
    EXPECT_EQ(out, "hello\n{\"lockscope_result\": {\"ops\": 5}}\n");
    ASSERT_TRUE(w.exitStatus());
    EXPECT_EQ(*w.exitStatus(), 3);
    EXPECT_FALSE(w.termSignal());
    EXPECT_EQ(w.scanner().results()["ops"], 5);
}

TEST(Workload, CrashIsRecordedAsSignal)
{
    WorkloadProcess w({"sh", "-c", "kill -SEGV $$"});
    w.release();
    drain(w);
    EXPECT_FALSE(w.exitStatus());
    ASSERT_TRUE(w.termSignal());
    EXPECT_EQ(*w.termSignal(), SIGSEGV);
}

TEST(Workload, MissingCommandIsOneClearLine)
{
    WorkloadProcess w({"/nonexistent/lockscope-no-such-command"});
    try {
        w.release();
        FAIL() << "exec failure not reported";
    } catch (const WorkloadError& e) {
        std::string what = e.what();
        EXPECT_NE(what.find("cannot run '/nonexistent/lockscope-no-such-command'"), std::string::npos)
            << what;
        EXPECT_NE(what.find("No such file"), std::string::npos) << what;
    }
    EXPECT_TRUE(w.exited());
}

TEST(Workload, ExitFdSignalsExit)
{
    WorkloadProcess w({"true"});
    if (w.exitFd() < 0)
        GTEST_SKIP() << "skipped: pidfd_open unsupported on this kernel";
    w.release();
    pollfd p{w.exitFd(), POLLIN, 0};
    ASSERT_EQ(::poll(&p, 1, 20000), 1);
    EXPECT_TRUE(w.poll());
    EXPECT_EQ(w.exitStatus(), 0);
}

TEST(Workload, DestructorKillsAHeldChild)
{
    pid_t pid;
    {
        WorkloadProcess w({"sleep", "1000"});
        pid = w.pid();
        EXPECT_TRUE(processExists(pid));
    }
    EXPECT_FALSE(processExists(pid));
}

// With at_exit the workload is traced and stops as it exits: the callback
// still reads its memory map (what record symbolizes user stacks from), and
// the exit status is what it would be untraced.
TEST(Workload, AtExitReadsTheMapOfAnExitingWorkload)
{
    std::string exe, maps;
    WorkloadOptions opt;
    opt.at_exit = [&](pid_t pid) {
        exe = exeOf(pid);
        std::ifstream in("/proc/" + std::to_string(pid) + "/maps");
        maps.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
    };
    WorkloadProcess w({"sh", "-c", "exit 3"}, opt);
    if (!w.traced())
        GTEST_SKIP() << "skipped: ptrace of a child refused here (Yama ptrace_scope 3 or a seccomp policy)";
    w.release();
    w.wait();
    EXPECT_EQ(w.exitStatus(), 3);
    ASSERT_FALSE(exe.empty()) << "at_exit did not run before the process was gone";
    EXPECT_NE(exe, exeOf(getpid())) << "at_exit ran before exec";
    EXPECT_NE(maps.find(exe), std::string::npos) << "the map at exit does not hold " << exe << ":\n" << maps;
}

// A traced workload gets the signals it is sent (the tracer passes each on):
// it dies of SIGTERM as it would untraced.
TEST(Workload, TracedWorkloadGetsItsSignals)
{
    bool atExit = false;
    WorkloadOptions opt;
    opt.at_exit = [&](pid_t) { atExit = true; };
    WorkloadProcess w({"sh", "-c", "kill -TERM $$; exec sleep 1000"}, opt);
    if (!w.traced())
        GTEST_SKIP() << "skipped: ptrace of a child refused here (Yama ptrace_scope 3 or a seccomp policy)";
    w.release();
    w.wait();
    EXPECT_FALSE(w.exitStatus());
    EXPECT_EQ(w.termSignal(), SIGTERM);
    EXPECT_TRUE(atExit);
}
