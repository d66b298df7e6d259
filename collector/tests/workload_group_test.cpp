// SPDX-License-Identifier: GPL-2.0-or-later
// The workload's process group, its parent-death signal, draining its output
// when a background process holds it, and running it as the invoking user.
#include <gtest/gtest.h>

#include <csignal>
#include <cstdlib>
#include <poll.h>
#include <grp.h>
#include <pwd.h>
#include <set>
#include <sstream>
#include <string>
#include <sys/wait.h>
#include <unistd.h>
#include <vector>

#include "lockscope/record/run_as.h"
#include "lockscope/record/workload.h"
#include "run_process.h"
#include "scoped_env.h"

using namespace lockscope::record;
using lockscope::testing::ScopedEnv;
using record_test::waitGone;

namespace {

// A bug here would hang (a blocking read, a process that never exits):
// SIGALRM then ends the test program instead, which fails the test.
class HangGuard {
public:
    explicit HangGuard(unsigned seconds) { ::alarm(seconds); }
    ~HangGuard() { ::alarm(0); }
    HangGuard(const HangGuard&) = delete;
    HangGuard& operator=(const HangGuard&) = delete;
};

// Reads the workload's output until it holds a full line (or end of file).
std::string firstLine(WorkloadProcess& w)
{
    std::string out;
    while (w.outputFd() >= 0 && out.find('\n') == std::string::npos) {
        pollfd p{w.outputFd(), POLLIN, 0};
        ::poll(&p, 1, -1);
        int fds[2];
        if (::pipe(fds) != 0)
            break;
        w.pumpOutput(fds[1]);
        ::close(fds[1]);
        char buf[256];
        ssize_t n;
        while ((n = ::read(fds[0], buf, sizeof buf)) > 0)
            out.append(buf, size_t(n));
        ::close(fds[0]);
    }
    return out;
}

std::string allOutput(WorkloadProcess& w)
{
    std::string out;
    while (w.outputFd() >= 0) {
        std::string more = firstLine(w);
        if (more.empty() && w.outputFd() < 0)
            break;
        out += more;
    }
    w.wait();
    return out;
}

} // namespace

TEST(WorkloadGroup, LeadsItsOwnProcessGroup)
{
    WorkloadProcess w({"sleep", "1000"});
    EXPECT_EQ(::getpgid(w.pid()), w.pid());
    w.release();
    EXPECT_EQ(::getpgid(w.pid()), w.pid());
    EXPECT_NE(::getpgid(w.pid()), ::getpgrp());
    w.terminate();
    w.wait();
    EXPECT_EQ(w.termSignal(), SIGTERM);
}

TEST(WorkloadGroup, BackgroundChildHoldingStdoutDoesNotBlockTheDrain)
{
    HangGuard guard(120);
    WorkloadProcess w({"sh", "-c", "sleep 1000 & echo $!"});
    w.release();
    const pid_t background = pid_t(std::atoi(firstLine(w).c_str()));
    ASSERT_GT(background, 0);
    w.wait();
    ASSERT_TRUE(w.exited());
    EXPECT_EQ(w.exitStatus(), 0);
    // The leader is gone, its child still holds the pipe: reading must
    // return with nothing rather than wait for that child.
    EXPECT_TRUE(w.pumpOutput(-1));
    EXPECT_GE(w.outputFd(), 0);
    EXPECT_TRUE(w.groupAlive());
    w.closeOutput();
    EXPECT_LT(w.outputFd(), 0);
    w.killGroup(SIGKILL);
    EXPECT_TRUE(waitGone(background));
}

TEST(WorkloadGroup, TerminateReachesStoppedMembersOfTheGroup)
{
    HangGuard guard(120);
    WorkloadProcess w({"sh", "-c", "sleep 1000 & echo $!; kill -STOP $!; wait"});
    w.release();
    const pid_t background = pid_t(std::atoi(firstLine(w).c_str()));
    ASSERT_GT(background, 0);
    w.terminate();
    w.wait();
    EXPECT_TRUE(waitGone(background)) << "a stopped process in the group survived SIGTERM";
}

TEST(WorkloadGroup, KilledRecorderTakesTheWorkloadWithIt)
{
    HangGuard guard(120);
    int fds[2];
    ASSERT_EQ(::pipe(fds), 0);
    const pid_t recorder = ::fork();
    ASSERT_GE(recorder, 0);
    if (recorder == 0) {
        ::close(fds[0]);
        WorkloadProcess w({"sleep", "1000"});
        w.release();
        const pid_t pid = w.pid();
        (void)!::write(fds[1], &pid, sizeof pid);
        ::pause();
        _exit(0);
    }
    ::close(fds[1]);
    pid_t workload = -1;
    ASSERT_EQ(::read(fds[0], &workload, sizeof workload), ssize_t(sizeof workload));
    ::close(fds[0]);
    ASSERT_TRUE(processExists(workload));
    ::kill(recorder, SIGKILL);
    int st = 0;
    ::waitpid(recorder, &st, 0);
    EXPECT_TRUE(waitGone(workload)) << "the workload outlived its SIGKILLed recorder";
    if (processExists(workload))
        ::kill(workload, SIGKILL);
}

TEST(WorkloadGroup, StdinFromDevNullWhenAsked)
{
    HangGuard guard(120);
    WorkloadProcess w({"sh", "-c", "cat; echo done"}, WorkloadOptions{std::nullopt, true, {}});
    w.release();
    EXPECT_EQ(allOutput(w), "done\n");
}

TEST(WorkloadUser, RunsAsTheSudoUserWithItsGroupsAndHome)
{
    if (geteuid() != 0)
        GTEST_SKIP() << "skipped: switching user needs root";
    const passwd* nobody = getpwnam("nobody");
    if (!nobody)
        GTEST_SKIP() << "skipped: no 'nobody' user in the passwd database";
    const std::string uid = std::to_string(nobody->pw_uid), gid = std::to_string(nobody->pw_gid);
    const std::string home = nobody->pw_dir;
    ScopedEnv pk("PKEXEC_UID", nullptr), su("SUDO_UID", uid.c_str()), sg("SUDO_GID", gid.c_str());
    const auto who = invokingUserCredentials();
    ASSERT_TRUE(who);
    EXPECT_EQ(who->user, "nobody");
    HangGuard guard(120);
    WorkloadProcess w({"sh", "-c", "id -u; id -G; echo $HOME $USER $LOGNAME"}, WorkloadOptions{who, true, {}});
    w.release();
    // id -G: root's own groups (0) must be gone, nobody's are all there is.
    EXPECT_EQ(allOutput(w), uid + "\n" + gid + "\n" + home + " nobody nobody\n");
}

TEST(WorkloadUser, NothingChangesWithoutSudoOrPkexec)
{
    ScopedEnv pk("PKEXEC_UID", nullptr), su("SUDO_UID", nullptr);
    EXPECT_FALSE(invokingUserCredentials());
}

// Supplementary groups as initgroups would set them: needs a user that has
// some (on a stock Debian, postgres is in ssl-cert, for one).
TEST(WorkloadUser, GetsTheUsersSupplementaryGroups)
{
    if (geteuid() != 0)
        GTEST_SKIP() << "skipped: switching user needs root";
    std::string name;
    uid_t uid = 0;
    std::vector<gid_t> groups(256);
    setpwent();
    while (const passwd* pw = getpwent()) {
        int n = int(groups.size());
        if (pw->pw_uid != 0 && getgrouplist(pw->pw_name, pw->pw_gid, groups.data(), &n) >= 0 && n > 1) {
            name = pw->pw_name;
            uid = pw->pw_uid;
            groups.resize(size_t(n));
            break;
        }
    }
    endpwent();
    if (name.empty())
        GTEST_SKIP() << "skipped: no user on this machine has supplementary groups";
    const std::string uidText = std::to_string(uid);
    ScopedEnv pk("PKEXEC_UID", uidText.c_str()), su("SUDO_UID", nullptr);
    const auto who = invokingUserCredentials();
    ASSERT_TRUE(who);
    HangGuard guard(120);
    WorkloadProcess w({"id", "-G"}, WorkloadOptions{who, true, {}});
    w.release();
    std::set<gid_t> seen, want(groups.begin(), groups.end());
    std::istringstream in(allOutput(w));
    for (gid_t g; in >> g;)
        seen.insert(g);
    EXPECT_EQ(seen, want) << "user " << name;
}
