// SPDX-License-Identifier: GPL-2.0-or-later
// The lab's host-side machinery, checked against the real tools it must
// interoperate with (cpio, gzip, base64, sh), without booting anything.
#include <chrono>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>

#include <cerrno>
#include <csignal>
#include <cstring>
#include <gtest/gtest.h>
#include <poll.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "lockscope/lab/error.h"
#include "lockscope/lab/guest.h"
#include "lockscope/lab/initramfs.h"
#include "lockscope/lab/kernel.h"
#include "lab_test_files.h"
#include "lockscope/lab/process.h"
#include "lockscope/lab/qemu.h"

namespace fs = std::filesystem;
using namespace lockscope::lab;
using lab_test::slurp;

namespace {

fs::path tempDir(const std::string& tag) { return lab_test::tempDir("unit", tag); }

// What the guest's send() produces, made by the real gzip and base64 tools.
std::string encodeLikeGuest(const fs::path& file, const std::string& name)
{
    auto r = runProcess({"sh", "-c", "gzip -c " + shellQuote(file.string()) + " | base64"}, 30);
    EXPECT_TRUE(r.ok()) << r.output;
    return "LSLAB-FILE " + name + " " + std::to_string(fs::file_size(file)) + "\r\n" + r.output +
           "LSLAB-EOF " + name + "\r\n";
}

} // namespace

TEST(LabProcess, CapturesOutputAndExitCode)
{
    auto r = runProcess({"sh", "-c", "echo out; echo err >&2; exit 3"}, 10);
    EXPECT_EQ(r.exit_code, 3);
    EXPECT_FALSE(r.timed_out);
    EXPECT_NE(r.output.find("out"), std::string::npos);
    EXPECT_NE(r.output.find("err"), std::string::npos);
}

TEST(LabProcess, TimeoutKillsTheWholeProcessGroup)
{
    auto dir = tempDir("timeout");
    auto pidFile = dir / "grandchild.pid";
    // The grandchild names itself, then becomes a long sleep; the shell
    // waits for that before sleeping too, so the kill finds both.
    const std::string grandchild = "sh -c 'echo $$ > " + pidFile.string() + "; exec sleep 30'";
    auto r = runProcess({"sh", "-c", grandchild + " & while [ ! -s " + pidFile.string() + " ]; do sleep 0.01; done; sleep 30"},
                        1.0);
    EXPECT_TRUE(r.timed_out);
    // A grandchild that never got to write its pid was killed (with the shell
    // that would have forked it) before it could run: nothing survives then.
    const std::string pidText = slurp(pidFile);
    if (!pidText.empty()) {
        const pid_t pid = std::stoi(pidText);
        // pidfd polls readable once the process has exited (zombie or reaped).
        const int fd = static_cast<int>(::syscall(SYS_pidfd_open, pid, 0));
        if (fd >= 0) {
            pollfd p{fd, POLLIN, 0};
            EXPECT_EQ(::poll(&p, 1, 10000), 1) << "the timed-out command's child " << pid << " survived the kill";
            ::close(fd);
        } else {
            EXPECT_EQ(errno, ESRCH) << "pidfd_open: " << std::strerror(errno);
        }
    }
    fs::remove_all(dir);
}

TEST(LabProcess, MissingProgramIsReportedNotThrown)
{
    auto r = runProcess({"/nonexistent/qemu-system-x86_64"}, 5);
    EXPECT_FALSE(r.started);
    EXPECT_NE(r.output.find("No such file"), std::string::npos) << r.output;
}

TEST(LabProcess, ShellQuoteSurvivesTheShell)
{
    for (std::string word : {"plain", "with space", "it's", "$HOME", "a\"b", "", "tab\there", "*"}) {
        auto r = runProcess({"sh", "-c", "printf %s " + shellQuote(word)}, 5);
        EXPECT_EQ(r.output, word);
    }
}

TEST(LabProcess, TailLines)
{
    EXPECT_EQ(tailLines("a\nb\nc\n", 2), "b\nc\n");
    EXPECT_EQ(tailLines("a\nb\nc", 5), "a\nb\nc");
    EXPECT_EQ(tailLines("", 3), "");
}

TEST(LabInitramfs, ArchiveListsAndExtractsWithCpio)
{
    if (findExecutable("cpio").empty())
        GTEST_SKIP() << "cpio not installed (apt-get install cpio): cannot cross-check the archive";
    auto dir = tempDir("cpio");
    std::ofstream(dir / "payload.bin", std::ios::binary) << std::string(12345, 'x') << "end";
    Initramfs rd;
    rd.addText("/init", "#!/bin/sh\necho hi\n", 0755);
    rd.addFile("/usr/bin/payload", (dir / "payload.bin").string(), 0755);
    rd.addSymlink("/bin/sh", "busybox");
    rd.write((dir / "rd.cpio").string());

    auto extract = dir / "x";
    fs::create_directories(extract);
    auto r = runProcess({"sh", "-c", "cd " + extract.string() + " && cpio -id --quiet < ../rd.cpio"}, 30);
    ASSERT_TRUE(r.ok()) << r.output;
    EXPECT_EQ(slurp(extract / "init"), "#!/bin/sh\necho hi\n");
    EXPECT_EQ(slurp(extract / "usr/bin/payload"), slurp(dir / "payload.bin"));
    EXPECT_TRUE(fs::is_symlink(extract / "bin/sh"));
    EXPECT_EQ(fs::read_symlink(extract / "bin/sh"), "busybox");
    EXPECT_TRUE((fs::status(extract / "init").permissions() & fs::perms::owner_exec) != fs::perms::none);
    EXPECT_TRUE(fs::is_directory(extract / "usr"));
    fs::remove_all(dir);
}

TEST(LabInitramfs, CopiesSharedLibrariesAndLoader)
{
    auto sh = findExecutable("sh");
    ASSERT_FALSE(sh.empty());
    auto libs = sharedLibraries(fs::canonical(sh).string());
    ASSERT_FALSE(libs.empty()) << "dash is dynamically linked on Debian";
    bool has_libc = false, has_loader = false;
    for (const auto& l : libs) {
        has_libc |= l.find("libc.so") != std::string::npos;
        has_loader |= l.find("ld-linux") != std::string::npos;
    }
    EXPECT_TRUE(has_libc);
    EXPECT_TRUE(has_loader);
    Initramfs rd;
    rd.addExecutableWithLibraries("/bin/sh", sh);
    for (const auto& l : libs)
        EXPECT_TRUE(rd.contains(l)) << l;
}

TEST(LabInitramfs, RejectsEscapingPathsAndMissingFiles)
{
    Initramfs rd;
    EXPECT_THROW(rd.addText("/../etc/passwd", "x"), LabError);
    EXPECT_THROW(rd.addFile("/bin/x", "/nonexistent/file"), LabError);
}

TEST(LabGuestChannel, RoundTripsFilesEncodedByRealTools)
{
    auto dir = tempDir("channel");
    std::string binary;
    for (int i = 0; i < 70000; ++i)
        binary += static_cast<char>((i * 7919) & 0xff);
    std::ofstream(dir / "cap.json", std::ios::binary) << binary;
    std::ofstream(dir / "empty.log", std::ios::binary);
    std::string stream = "\x1b[2J noise before\r\n" + encodeLikeGuest(dir / "cap.json", "cap.json") +
                         encodeLikeGuest(dir / "empty.log", "empty.log") +
                         "LSLAB-MISSING gone.json\r\nLSLAB-STEP record 0\r\nLSLAB-STEP facts 7\r\nLSLAB-DONE\r\n";
    auto report = parseGuestChannel(stream);
    EXPECT_TRUE(report.done);
    EXPECT_TRUE(report.problems.empty()) << report.problems.front();
    EXPECT_EQ(report.files["cap.json"], binary);
    EXPECT_EQ(report.files.count("empty.log"), 1u);
    EXPECT_EQ(report.files["empty.log"], "");
    EXPECT_EQ(report.step_exit["record"], 0);
    EXPECT_EQ(report.step_exit["facts"], 7);
    ASSERT_EQ(report.missing.size(), 1u);
    EXPECT_EQ(report.missing[0], "gone.json");
    fs::remove_all(dir);
}

TEST(LabGuestChannel, TruncatedOrCorruptTransfersAreProblemsNotCrashes)
{
    auto dir = tempDir("corrupt");
    std::ofstream(dir / "a", std::ios::binary) << std::string(5000, 'a') << "tail";
    auto good = encodeLikeGuest(dir / "a", "a");
    // Cut in the middle: no end marker, no DONE.
    auto cut = parseGuestChannel(good.substr(0, good.size() / 2));
    EXPECT_FALSE(cut.done);
    EXPECT_EQ(cut.files.count("a"), 0u);
    ASSERT_FALSE(cut.problems.empty());
    EXPECT_NE(cut.problems[0].find("truncated"), std::string::npos);
    // Flip one base64 character of the compressed data (past the 10-byte
    // gzip header, whose mtime no checksum covers): inflate or the CRC catches it.
    auto flipped = good;
    auto pos = flipped.find('\n') + 40;
    flipped[pos] = flipped[pos] == 'A' ? 'B' : 'A';
    auto bad = parseGuestChannel(flipped + "LSLAB-DONE\n");
    EXPECT_EQ(bad.files.count("a"), 0u);
    EXPECT_FALSE(bad.problems.empty());
    // A marker inside a file ends it and is still honoured.
    auto nested = parseGuestChannel("LSLAB-FILE x 3\nQUJD\nLSLAB-STEP s 0\nLSLAB-DONE\n");
    EXPECT_TRUE(nested.done);
    EXPECT_EQ(nested.step_exit["s"], 0);
    EXPECT_FALSE(nested.problems.empty());
    // Garbage is ignored.
    auto junk = parseGuestChannel(std::string("\0\xff\x01 LSLAB-FILE\nLSLAB-STEP\n", 24));
    EXPECT_FALSE(junk.done);
    fs::remove_all(dir);
}

TEST(LabGuestScript, RunsUnderARealShellAndSpeaksTheProtocol)
{
    // The generated /init minus its mounts and poweroff, run by the host's
    // sh with ttyS1 replaced by a file: steps, exit codes and sent files must
    // parse back.
    auto dir = tempDir("script");
    std::vector<GuestStep> steps = {
        {"hello", {"sh", "-c", "echo 'it''s here' > " + (dir / "made.txt").string() + "; exit 4"},
         {(dir / "made.txt").string(), (dir / "never.txt").string()}},
        {"second", {"echo", "two words"}, {}}};
    auto script = makeInitScript(steps);
    auto body_start = script.find("send() {");
    auto body_end = script.find("exec 3>&-");
    ASSERT_NE(body_start, std::string::npos);
    ASSERT_NE(body_end, std::string::npos);
    auto body = "mkdir -p " + (dir / "lab/out").string() + "\nexec 3>" + (dir / "channel").string() + "\n" +
                script.substr(body_start, body_end - body_start);
    // Point /lab/out at the temp dir.
    for (size_t p; (p = body.find(" /lab/out/")) != std::string::npos;)
        body.replace(p, 10, " " + (dir / "lab/out").string() + "/");
    std::ofstream(dir / "init.sh") << body;
    auto r = runProcess({"sh", (dir / "init.sh").string()}, 30);
    ASSERT_TRUE(r.ok()) << r.output;
    auto report = parseGuestChannel(slurp(dir / "channel"));
    EXPECT_TRUE(report.done);
    EXPECT_EQ(report.step_exit["hello"], 4);
    EXPECT_EQ(report.step_exit["second"], 0);
    EXPECT_EQ(report.files["made.txt"], "its here\n");
    EXPECT_EQ(report.files["second.log"], "two words\n");
    ASSERT_EQ(report.missing.size(), 1u);
    EXPECT_EQ(report.missing[0], "never.txt");
    EXPECT_THROW(makeInitScript({{"bad name", {"true"}, {}}}), LabError);
    fs::remove_all(dir);
}

TEST(LabKernel, ParsesKernelArguments)
{
    auto k = parseKernelArg("A=arch/x86/boot/bzImage");
    EXPECT_EQ(k.name, "A");
    EXPECT_EQ(k.spec, "arch/x86/boot/bzImage");
    EXPECT_EQ(parseKernelArg("base-1.0=debian:6.1").spec, "debian:6.1");
    EXPECT_THROW(parseKernelArg("nobzimage"), LabError);
    EXPECT_THROW(parseKernelArg("=x"), LabError);
    EXPECT_THROW(parseKernelArg("A="), LabError);
    EXPECT_THROW(parseKernelArg("a b=x"), LabError);
}

TEST(LabKernel, MapsDebianSpecsToPackages)
{
    EXPECT_EQ(debianPackageFor("debian"), "linux-image-amd64");
    EXPECT_EQ(debianPackageFor("debian:6.1"), "linux-image-amd64");
    EXPECT_EQ(debianPackageFor("debian:cloud"), "linux-image-cloud-amd64");
    EXPECT_EQ(debianPackageFor("debian:6.1.0-57-cloud-amd64"), "linux-image-6.1.0-57-cloud-amd64");
    EXPECT_EQ(debianPackageFor("debian:linux-image-6.1.0-57-amd64"), "linux-image-6.1.0-57-amd64");
    EXPECT_THROW(debianPackageFor("debian:windows"), LabError);
}

TEST(LabKernel, ReadsTheBzImageVersionAndRejectsOtherFiles)
{
    auto dir = tempDir("bzimage");
    // A minimal setup header: "HdrS" at 0x202, kernel_version at 0x20e
    // pointing 0x200 bytes before the string.
    std::string image(0x1000, '\0');
    image.replace(0x202, 4, "HdrS");
    image[0x20e] = 0x00;
    image[0x20f] = 0x08;  // string at 0x800 + 0x200
    std::string version = "6.9.0-test (dev@box) #1 SMP";
    image.replace(0xa00, version.size(), version);
    std::ofstream(dir / "bzImage", std::ios::binary) << image;
    EXPECT_EQ(bzImageVersion((dir / "bzImage").string()), version);

    std::ofstream(dir / "vmlinux", std::ios::binary) << std::string("\x7f" "ELF") << std::string(0x300, '\0');
    try {
        bzImageVersion((dir / "vmlinux").string());
        FAIL() << "an ELF vmlinux was accepted as a bzImage";
    } catch (const LabError& e) {
        EXPECT_NE(std::string(e.what()).find("bzImage"), std::string::npos) << e.what();
    }
    EXPECT_THROW(resolveKernel({"A", (dir / "missing").string()}, dir.string(), [](const std::string&) {}),
                 LabError);
    auto k = resolveKernel({"A", (dir / "bzImage").string()}, dir.string(), [](const std::string&) {});
    EXPECT_EQ(k.version, version);
    fs::remove_all(dir);
}

TEST(LabKernel, ReadsConfigValues)
{
    auto dir = tempDir("config");
    std::ofstream(dir / "config") << "CONFIG_KPROBES=y\n# CONFIG_FPROBE is not set\nCONFIG_NR_CPUS=64\n";
    EXPECT_EQ(kernelConfigValue((dir / "config").string(), "KPROBES"), "y");
    EXPECT_EQ(kernelConfigValue((dir / "config").string(), "FPROBE"), "n");
    EXPECT_EQ(kernelConfigValue((dir / "config").string(), "NR_CPUS"), "64");
    fs::remove_all(dir);
}

TEST(LabQemu, AccelerationChoice)
{
    EXPECT_EQ(chooseAccel(Accel::Tcg).name, "tcg");
    EXPECT_EQ(chooseAccel(Accel::Kvm).name, "kvm");
    auto automatic = chooseAccel(Accel::Auto);
    EXPECT_FALSE(automatic.why.empty());
    // TCG is always single-threaded: MTTCG hung with probes on spin-lock functions.
    EXPECT_EQ(chooseAccel(Accel::Tcg).args.back(), "tcg,thread=single");
    EXPECT_THROW(parseAccel("hvf"), LabError);
    // Opt-in MTTCG with native spinlocks (no hypervisor bit), for spinlock contention in the guest.
    const auto multi = chooseAccel(parseAccel("tcg-multi"));
    EXPECT_EQ(multi.name, "tcg-multi");
    EXPECT_EQ(multi.args, (std::vector<std::string> { "-accel", "tcg,thread=multi", "-cpu", "qemu64,-hypervisor" }));
    // Native spinlocks on one host thread: a capture's kind stays "tcg" (single-threaded).
    const auto native = chooseAccel(parseAccel("tcg-native"));
    EXPECT_EQ(native.name, "tcg");
    EXPECT_EQ(native.args, (std::vector<std::string> { "-accel", "tcg,thread=single", "-cpu", "qemu64,-hypervisor" }));
}

namespace {

// Waits (bounded) until a pid has exited: gone, or a zombie nobody reaped yet.
bool exitsWithin(pid_t pid, int seconds)
{
    for (int i = 0; i < seconds * 20; ++i) {
        std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
        std::string line;
        if (!std::getline(stat, line))
            return true;
        auto close = line.rfind(')');
        if (close != std::string::npos && close + 2 < line.size() && line[close + 2] == 'Z')
            return true;
        ::usleep(50000);
    }
    return false;
}

// A stand-in for the lab: a child process whose runProcess() starts
// `sh -c script` (which writes its pid and its own child's pid to files).
pid_t startLabRunning(const fs::path& dir)
{
    auto script = "sleep 300 & echo $! > " + (dir / "grandchild").string() + "; echo $$ > " +
                  (dir / "child.tmp").string() + " && mv " + (dir / "child.tmp").string() + " " +
                  (dir / "child").string() + "; wait";
    pid_t lab = ::fork();
    if (lab == 0) {
        runProcess({"sh", "-c", script}, 600);
        ::_exit(0);
    }
    for (int i = 0; i < 400 && !fs::exists(dir / "child"); ++i)
        ::usleep(25000);
    return lab;
}

pid_t readPid(const fs::path& p)
{
    pid_t pid = 0;
    std::ifstream(p) >> pid;
    return pid;
}

} // namespace

TEST(LabProcess, AKilledLabTakesItsChildWithIt)
{
    auto dir = tempDir("pdeathsig");
    pid_t lab = startLabRunning(dir);
    ASSERT_TRUE(fs::exists(dir / "child")) << "the child never started";
    pid_t child = readPid(dir / "child");
    ASSERT_GT(child, 0);
    ::kill(lab, SIGKILL);  // no handler can run: only PR_SET_PDEATHSIG acts
    int status = 0;
    ::waitpid(lab, &status, 0);
    EXPECT_TRUE(exitsWithin(child, 10)) << "pid " << child << " outlived the SIGKILLed lab";
    ::kill(readPid(dir / "grandchild"), SIGKILL);
    fs::remove_all(dir);
}

TEST(LabProcess, CtrlCEndsTheChildsWholeProcessGroup)
{
    auto dir = tempDir("sigint");
    pid_t lab = startLabRunning(dir);
    ASSERT_TRUE(fs::exists(dir / "child")) << "the child never started";
    pid_t child = readPid(dir / "child");
    pid_t grandchild = readPid(dir / "grandchild");
    ASSERT_GT(grandchild, 0);
    ::kill(lab, SIGINT);
    int status = 0;
    ::waitpid(lab, &status, 0);
    EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGINT) << "the lab must still die of the signal";
    EXPECT_TRUE(exitsWithin(child, 10)) << "the child survived Ctrl-C";
    EXPECT_TRUE(exitsWithin(grandchild, 10)) << "the child's own child survived Ctrl-C";
    fs::remove_all(dir);
}

TEST(LabProcess, OutputIsCappedToItsTail)
{
    auto r = runProcess({"sh", "-c", "head -c 60000000 /dev/zero; echo; echo the-last-line"}, 120);
    ASSERT_TRUE(r.ok());
    EXPECT_TRUE(r.output_truncated);
    EXPECT_LE(r.output.size(), kMaxOutputBytes + kMaxOutputBytes / 4);
    EXPECT_NE(tailLines(r.output, 1).find("the-last-line"), std::string::npos);
}

TEST(LabGuestChannel, GunzipRefusesOutputOverItsCap)
{
    auto r = runProcess({"sh", "-c", "head -c 3000000 /dev/zero | gzip -c"}, 30);
    ASSERT_TRUE(r.ok());
    EXPECT_EQ(gunzip(r.output).size(), 3000000u);
    try {
        gunzip(r.output, 1u << 20);
        ADD_FAILURE() << "a 3 MB stream passed a 1 MiB cap";
    } catch (const LabError& e) {
        EXPECT_NE(std::string(e.what()).find("more than"), std::string::npos) << e.what();
    }
}

namespace {

// Boot options that run the shell script `script`, written to dir/qemu, as qemu.
BootOptions standInQemu(const fs::path& dir, const std::string& script)
{
    const auto fake = dir / "qemu";
    std::ofstream(fake) << "#!/bin/sh\n" << script;
    fs::permissions(fake, fs::perms::owner_all);
    BootOptions o;
    o.qemu = fake.string();
    o.accel = Accel::Tcg;
    o.kernel = o.initrd = "/dev/null";
    o.data_path = (dir / "channel").string();
    return o;
}

} // namespace

TEST(LabQemu, AGuestWhoseHeartbeatStopsIsKilledAsStalled)
{
    // A stand-in for qemu: the console shows two heartbeats, then nothing
    // (the frozen-guest case); the watchdog must end it long before --timeout.
    auto dir = tempDir("stall");
    auto fake = dir / "qemu";
    BootOptions o = standInQemu(dir, "echo LSLAB-STAGE guest-up\necho LSLAB-BEAT\nsleep 0.2\necho LSLAB-BEAT\n"
                                     "exec sleep 600\n");
    o.stall_s = 1;
    o.timeout_s = 300;
    auto r = bootGuest(o, {});
    EXPECT_TRUE(r.stalled);
    EXPECT_FALSE(r.timed_out);

    // A guest that keeps beating until it powers off is not stalled.
    std::ofstream(fake, std::ios::trunc) << "#!/bin/sh\nfor i in 1 2 3 4; do echo LSLAB-BEAT; sleep 0.3; done\n";
    r = bootGuest(o, {});
    EXPECT_FALSE(r.stalled);
    EXPECT_EQ(r.exit_code, 0);
    EXPECT_GT(r.max_beat_gap_s, 0.0);
    fs::remove_all(dir);
}

TEST(LabQemu, AGuestWhoseKernelReportsASoftLockupIsKilledAsStalled)
{
    // A stand-in for qemu: one vCPU keeps beating while the kernel reports
    // another stuck (seen in a 4-vCPU tcg-native guest attaching the hold
    // probe); the watchdog must end it long before --timeout.
    auto dir = tempDir("lockup");
    BootOptions o = standInQemu(dir, "echo LSLAB-STAGE guest-up\necho LSLAB-BEAT\n"
                                     "printf '[   64.809371] watchdog: BUG: soft lockup - CPU#2 stuck for 45s! "
                                     "[kworker/2:2:64]\\r\\n'\n"
                                     "while true; do echo LSLAB-BEAT; sleep 0.2; done\n");
    o.stall_s = 20;
    o.timeout_s = 300;
    const auto t0 = std::chrono::steady_clock::now();
    auto r = bootGuest(o, {});
    EXPECT_TRUE(r.stalled);
    EXPECT_FALSE(r.timed_out);
    EXPECT_EQ(r.stall_report, "soft lockup - CPU#2 stuck for 45s! [kworker/2:2:64]");
    EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(), 20.0);

    // --stall-timeout 0 (a guest kept for gdb) keeps it: here until the timeout.
    o.stall_s = 0;
    o.timeout_s = 1;
    r = bootGuest(o, {});
    EXPECT_FALSE(r.stalled);
    EXPECT_TRUE(r.timed_out);
    fs::remove_all(dir);
}

TEST(LabQemu, TheGdbStubListensOnLoopbackOnlyWhenAskedFor)
{
    // A stand-in for qemu that writes down its arguments.
    auto dir = tempDir("gdb");
    const auto argsFile = dir / "args";
    BootOptions o = standInQemu(dir, "echo \"$*\" > " + argsFile.string() + "\n");
    auto args = [&] {
        EXPECT_EQ(bootGuest(o, {}).exit_code, 0);
        std::ifstream in(argsFile);
        return std::string(std::istreambuf_iterator<char>(in), {});
    };
    EXPECT_EQ(args().find(" -gdb "), std::string::npos);
    o.gdb_port = 4321;
    EXPECT_NE(args().find(" -gdb tcp:127.0.0.1:4321"), std::string::npos);
    fs::remove_all(dir);
}

TEST(LabGuestScript, TheGuestSendsAHeartbeatWithoutHoldingTheResultChannel)
{
    auto script = makeInitScript({{"a", {"true"}, {}}});
    auto beat = script.find("LSLAB-BEAT");
    ASSERT_NE(beat, std::string::npos);
    auto line_end = script.find('\n', beat);
    EXPECT_NE(script.substr(beat, line_end - beat).find("3>&-"), std::string::npos)
        << "the heartbeat loop must not keep ttyS1 open (the last close drains the UART)";
    EXPECT_LT(beat, script.find("LSLAB-STAGE step a"));
}
