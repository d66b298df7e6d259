// SPDX-License-Identifier: GPL-2.0-or-later
// Two labs started together on one output directory, and two builds of one
// cached tree, take turns instead of corrupting each other; the second names
// the first (pid, command) in one line. Real labs, a stand-in qemu and a fake
// kernel tree: no kernel is built or booted.
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include "lockscope/lab/holder_lock.h"
#include "lockscope/lab/lab.h"
#include "lab_test_files.h"
#include "lockscope/lab/process.h"
#include "lockscope/lab/qemu.h"
#include "lockscope/lab/source_build.h"

namespace fs = std::filesystem;
using namespace lockscope::lab;
using lab_test::slurp;

namespace {

fs::path tempDir(const std::string& tag) { return lab_test::tempDir("lock", tag); }

void writeExecutable(const fs::path& p, const std::string& text)
{
    std::ofstream(p) << text;
    fs::permissions(p, fs::perms::owner_all);
}

// Forks `count` children that block on a pipe until released together, then
// run body(index) and exit with its result.
template <typename Body>
std::vector<pid_t> startTogether(int count, Body body)
{
    int gate[2];
    EXPECT_EQ(::pipe(gate), 0);
    std::vector<pid_t> pids;
    for (int i = 0; i < count; ++i) {
        pid_t pid = ::fork();
        if (pid == 0) {
            ::close(gate[1]);
            char c;
            (void)!::read(gate[0], &c, 1);
            ::_exit(body(i));
        }
        pids.push_back(pid);
    }
    ::close(gate[0]);
    ::close(gate[1]);  // EOF releases every child at once
    return pids;
}

int waitExit(pid_t pid)
{
    int status = 0;
    ::waitpid(pid, &status, 0);
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

// Every "start P" is followed by its "end P" before the next start: the
// runs never overlapped. Returns the pids in order.
std::vector<std::string> runsInTurn(const std::string& log)
{
    std::istringstream lines(log);
    std::vector<std::string> order;
    std::string what, who, open;
    while (lines >> what >> who) {
        if (what == "start") {
            EXPECT_EQ(open, "") << "run " << who << " started while " << open << " was running:\n" << log;
            open = who;
            order.push_back(who);
        } else {
            EXPECT_EQ(open, who) << log;
            open.clear();
        }
    }
    return order;
}

// A bzImage-shaped file: "HdrS" at 0x202.
std::string fakeBzImage(const fs::path& dir)
{
    std::string image(0x1000, '\0');
    image.replace(0x202, 4, "HdrS");
    auto path = dir / "bzImage";
    std::ofstream(path, std::ios::binary) << image;
    return path.string();
}

// A child that holds `lock_path` as a lab would, until killed.
pid_t holdLockInChild(const std::string& lock_path)
{
    int ready[2];
    EXPECT_EQ(::pipe(ready), 0);
    pid_t pid = ::fork();
    if (pid == 0) {
        ::close(ready[0]);
        HolderLock lock(lock_path, "test", HolderLock::Mode::Refuse, {});
        (void)!::write(ready[1], "x", 1);
        ::pause();
        ::_exit(0);
    }
    ::close(ready[1]);
    char c;
    EXPECT_EQ(::read(ready[0], &c, 1), 1) << "the holder never took the lock";
    ::close(ready[0]);
    return pid;
}

} // namespace

TEST(LabLock, TwoLabsStartedTogetherOnOneOutputDirectoryTakeTurns)
{
    auto dir = tempDir("out");
    // qemu as the lab starts it: logs its run (its parent is the lab), takes a
    // second, and exits without results (the guest "stops early").
    auto qemu = dir / "qemu";
    writeExecutable(qemu, "#!/bin/sh\necho start $PPID >> " + (dir / "runs").string() +
                              "\nsleep 1\necho end $PPID >> " + (dir / "runs").string() + "\n");
    LabOptions o;
    o.kernels = {{"a", fakeBzImage(dir)}};
    o.workload = {"sleep", "1"};
    o.lockscope = "/bin/true";
    o.out_dir = (dir / "out").string();
    o.cache_dir = (dir / "cache").string();
    o.boot.qemu = qemu.string();
    o.boot.accel = Accel::Tcg;
    o.boot_retries = 0;
    auto labs = startTogether(2, [&](int i) {
        std::ofstream log(dir / ("lab" + std::to_string(i) + ".log"));
        try {
            return runLab(o, log);
        } catch (const std::exception& e) {
            log << "threw: " << e.what() << std::endl;
            return 99;
        }
    });
    for (pid_t lab : labs)
        EXPECT_EQ(waitExit(lab), 1) << "each lab runs to the end (its stand-in guest fails)";
    const auto order = runsInTurn(slurp(dir / "runs"));
    ASSERT_EQ(order.size(), 2u) << slurp(dir / "lab0.log") << slurp(dir / "lab1.log");
    // The second lab said, in one line, who it was waiting for.
    const int second = std::to_string(labs[0]) == order[1] ? 0 : 1;
    const auto log = slurp(dir / ("lab" + std::to_string(second) + ".log"));
    const auto expected = "output dir '" + o.out_dir + "' is in use by pid " + order[0] + " (";
    const auto at = log.find(expected);
    ASSERT_NE(at, std::string::npos) << log;
    const auto line = log.substr(at, log.find('\n', at) - at);
    EXPECT_NE(line.find("lab_unit_test"), std::string::npos) << "names the holder's command: " << line;
    EXPECT_NE(line.find("waiting"), std::string::npos) << line;
    EXPECT_EQ(slurp(dir / ("lab" + std::to_string(1 - second) + ".log")).find("in use"), std::string::npos);
    fs::remove_all(dir);
}

TEST(LabLock, ALabToldNotToWaitRefusesWithOneLineAndNoStaleLockOutlivesItsHolder)
{
    auto dir = tempDir("nowait");
    auto out = dir / "out";
    fs::create_directories(out / ".lab");
    fs::permissions(out, fs::perms::owner_all);
    fs::permissions(out / ".lab", fs::perms::owner_all);
    const std::vector<std::string> lab = {LOCKSCOPE_BIN, "lab", "--no-wait", "-k", "a=" + (dir / "none").string(),
                                          "-o", out.string(), "--cache", (dir / "cache").string(), "--",
                                          "sleep", "1"};
    pid_t holder = holdLockInChild((out / ".lab/lock").string());
    auto r = runProcess(lab, 60);
    EXPECT_EQ(r.exit_code, kLabBusyExitCode) << r.output;
    EXPECT_EQ(r.output.rfind("lockscope: output dir '" + out.string() + "' is in use by pid " +
                                 std::to_string(holder) + " (", 0), 0u) << r.output;
    EXPECT_NE(r.output.find("lab_unit_test"), std::string::npos) << "names the holder's command: " << r.output;
    EXPECT_EQ(std::count(r.output.begin(), r.output.end(), '\n'), 1) << r.output;
    EXPECT_NE(r.output.find("choose another with -o"), std::string::npos) << r.output;

    // The holder dies without cleaning up: the kernel released its lock.
    ::kill(holder, SIGKILL);
    waitExit(holder);
    r = runProcess(lab, 60);
    EXPECT_EQ(r.output.find("in use"), std::string::npos) << r.output;
    EXPECT_EQ(r.exit_code, 1) << "fails on the missing kernel, not on the lock:\n" << r.output;
    EXPECT_NE(r.output.find("FAILED"), std::string::npos) << r.output;
    fs::remove_all(dir);
}

TEST(LabLock, TwoBuildsOfOneCachedTreeTakeTurns)
{
    auto dir = tempDir("tree");
    auto tree = dir / "linux";
    fs::create_directories(tree / "arch/x86");
    std::ofstream(tree / "arch/x86/Kconfig") << "# fake\n";
    std::ofstream(tree / "ipc.c") << "one\n";
    // make bzImage logs its run (make's parent is the lab) and takes a second.
    const auto runs = (dir / "runs").string();
    std::ofstream(tree / "Makefile") << "tinyconfig:\n\t@echo '# CONFIG_64BIT is not set' > .config\n"
                                        "olddefconfig:\n\t@true\n"
                                        "bzImage:\n\techo start $$PPID >> " << runs << "\n\tsleep 1\n"
                                     << "\tmkdir -p arch/x86/boot\n"
                                        "\thead -c 1024 /dev/zero > arch/x86/boot/bzImage\n"
                                        "\tprintf 'HdrS' | dd of=arch/x86/boot/bzImage bs=1 seek=514 "
                                        "conv=notrunc 2>/dev/null\n"
                                        "\techo end $$PPID >> " << runs << "\n";
    auto git = runProcess({"sh", "-c", "cd " + shellQuote(tree.string()) +
                                           " && git init -q && git add -A && git -c user.name=t -c "
                                           "user.email=t@t commit -qm base"}, 60);
    ASSERT_TRUE(git.ok()) << git.output;
    // Two kernels of one tree (different patches), so neither is cached.
    for (const char* n : {"1", "2"})
        std::ofstream(dir / (std::string(n) + ".patch"))
            << "--- a/ipc.c\n+++ b/ipc.c\n@@ -1 +1 @@\n-one\n+" << n << "\n";
    const auto cache = (dir / "cache").string();
    auto builds = startTogether(2, [&](int i) {
        std::ofstream log(dir / ("build" + std::to_string(i) + ".log"));
        try {
            auto spec = "src:" + tree.string() + "+" + (dir / (std::to_string(i + 1) + ".patch")).string();
            buildKernelFromSource({"k", spec}, cache, [&](const std::string& l) { log << l << std::endl; });
            return 0;
        } catch (const std::exception& e) {
            log << "threw: " << e.what() << std::endl;
            return 1;
        }
    });
    for (pid_t b : builds)
        EXPECT_EQ(waitExit(b), 0);
    const auto order = runsInTurn(slurp(runs));
    ASSERT_EQ(order.size(), 2u) << slurp(dir / "build0.log") << slurp(dir / "build1.log");
    const auto logs = slurp(dir / "build0.log") + slurp(dir / "build1.log");
    // make's parent is the env(1) the lab starts, so match the tree, not the pid.
    EXPECT_NE(logs.find("build tree '" + cache + "/trees/git-"), std::string::npos) << logs;
    const auto at = logs.find("' is in use by pid ");
    ASSERT_NE(at, std::string::npos) << logs;
    const auto pid = std::stol(logs.substr(at + 19));
    EXPECT_TRUE(pid == builds[0] || pid == builds[1]) << logs;
    EXPECT_NE(logs.find("waiting for it to finish"), std::string::npos) << logs;
    fs::remove_all(dir);
}

// --accel kvm where KVM cannot boot a stock kernel (no /dev/kvm, or a PVM
// /dev/kvm as on these VMs): one line before anything is fetched or booted,
// instead of qemu's MSR assertion, a hang or a missing-device error.
TEST(LabQemu, UnusableKvmIsOneClearLine)
{
    std::error_code ec;
    const std::string why = kvmUnusableReason();
    if (why.empty())
        GTEST_SKIP() << "skipped: this host's /dev/kvm boots stock kernels, so --accel kvm is not refused";
    if (fs::exists("/dev/kvm", ec) && fs::exists("/sys/module/kvm_pvm", ec)) {
        EXPECT_NE(why.find("boots only PVM-enabled guest kernels"), std::string::npos) << why;
    } else if (!fs::exists("/dev/kvm", ec)) {
        EXPECT_NE(why.find("no /dev/kvm"), std::string::npos) << why;
    }
    auto dir = tempDir("pvm");
    auto r = runProcess({LOCKSCOPE_BIN, "lab", "--accel", "kvm", "-k", "a=debian:cloud", "-o", (dir / "out").string(),
                         "--cache", (dir / "cache").string(), "--", "sleep", "1"},
                        60);
    EXPECT_EQ(r.exit_code, 1) << r.output;
    EXPECT_EQ(std::count(r.output.begin(), r.output.end(), '\n'), 1) << r.output;
    EXPECT_NE(r.output.find(why), std::string::npos) << r.output;
    EXPECT_NE(r.output.find("--accel tcg-multi"), std::string::npos) << r.output;
    EXPECT_FALSE(fs::exists(dir / "cache")) << "fetched a kernel before refusing";
    EXPECT_FALSE(fs::exists(dir / "out")) << "wrote output before refusing";
    fs::remove_all(dir);
}
