// SPDX-License-Identifier: GPL-2.0-or-later
// Runs each workload executable for a short time and checks its result line.
#include <gtest/gtest.h>

#include <spawn.h>
#include <sys/sem.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <csignal>
#include <cstring>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <thread>

#include <nlohmann/json.hpp>

extern char** environ;

namespace {

struct Outcome {
    int status = -1;
    std::string out;
};

Outcome run(const std::string& args)
{
    std::string cmd = std::string(LOCKSCOPE_WORKLOAD_DIR) + "/" + args + " 2>&1";
    Outcome r;
    FILE* p = popen(cmd.c_str(), "r");
    if (!p)
        return r;
    std::array<char, 4096> buf{};
    size_t n = 0;
    while ((n = fread(buf.data(), 1, buf.size(), p)) > 0)
        r.out.append(buf.data(), n);
    int st = pclose(p);
    r.status = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
    return r;
}

nlohmann::json resultOf(const Outcome& r)
{
    std::istringstream in(r.out);
    std::string line, last;
    int found = 0;
    while (std::getline(in, line))
        if (line.rfind("{\"lockscope_result\":", 0) == 0) {
            last = line;
            ++found;
        }
    EXPECT_EQ(found, 1) << r.out;
    if (found != 1)
        return {};
    return nlohmann::json::parse(last).at("lockscope_result");
}

void expectSane(const nlohmann::json& j, const std::string& name)
{
    ASSERT_TRUE(j.is_object());
    EXPECT_EQ(j.at("benchmark"), name);
    EXPECT_GT(j.at("ops").get<uint64_t>(), 0u);
    EXPECT_GT(j.at("ops_per_sec").get<double>(), 0.0);
    EXPECT_GT(j.at("duration_s").get<double>(), 0.0);
    EXPECT_LT(j.at("duration_s").get<double>(), 30.0);
}

} // namespace

TEST(Workloads, SemopMultiSingleAndMulti)
{
    Outcome r = run("semop-multi --threads 3 --sems 8 --duration 0.3");
    ASSERT_EQ(r.status, 0) << r.out;
    auto j = resultOf(r);
    expectSane(j, "semop-multi");
    EXPECT_EQ(j.at("mode"), "single");
    EXPECT_EQ(j.at("threads"), 3);
    EXPECT_EQ(j.at("semaphores"), 8);
    EXPECT_EQ(j.at("nsops"), 1);

    r = run("semop-multi --threads 4 --sems 4 --multi --nsops 3 --duration 0.3");
    ASSERT_EQ(r.status, 0) << r.out;
    j = resultOf(r);
    expectSane(j, "semop-multi");
    EXPECT_EQ(j.at("mode"), "multi");
    EXPECT_EQ(j.at("nsops"), 3);
}

TEST(Workloads, SemPostwait)
{
    Outcome r = run("sem-postwait --pairs 2 --duration 0.3");
    ASSERT_EQ(r.status, 0) << r.out;
    auto j = resultOf(r);
    expectSane(j, "sem-postwait");
    EXPECT_GT(j.at("cycles").get<uint64_t>(), 0u);
    EXPECT_EQ(j.at("ops").get<uint64_t>(), 4 * j.at("cycles").get<uint64_t>());
    EXPECT_EQ(j.at("sleepers"), 0);

    // Idle sleepers block on their own semaphores until the set is removed;
    // a grant to one of them is an error exit, a missed removal a hang.
    r = run("sem-postwait --pairs 1 --sleepers 16 --duration 0.3");
    ASSERT_EQ(r.status, 0) << r.out;
    j = resultOf(r);
    expectSane(j, "sem-postwait");
    EXPECT_EQ(j.at("sleepers"), 16);
    EXPECT_EQ(j.at("semaphores"), 18);
    EXPECT_EQ(j.at("threads"), 18);
}

TEST(Workloads, TimerStress)
{
    Outcome r = run("timer-stress --procs 2 --timers 4 --duration 0.3");
    ASSERT_EQ(r.status, 0) << r.out;
    auto j = resultOf(r);
    expectSane(j, "timer-stress");
    EXPECT_EQ(j.at("procs"), 2);
    EXPECT_GT(j.at("user_s").get<double>() + j.at("sys_s").get<double>(), 0.0);
}

TEST(Workloads, SemgetKeysHasItsRows)
{
    Outcome r = run("semget-keys --keys 1,10,100 --duration 0.3");
    ASSERT_EQ(r.status, 0) << r.out;
    auto j = resultOf(r);
    expectSane(j, "semget-keys");
    const auto& rows = j.at("rows");
    ASSERT_EQ(rows.size(), 3u);
    int64_t expected[] = {1, 10, 100};
    for (size_t i = 0; i < 3; ++i) {
        EXPECT_EQ(rows[i].at("keys"), expected[i]);
        EXPECT_GT(rows[i].at("create_total_us").get<double>(), 0.0);
        EXPECT_GE(rows[i].at("create_total_us").get<double>(), rows[i].at("create_max_us").get<double>());
        EXPECT_GE(rows[i].at("lookup_passes").get<uint64_t>(), 1u);
        // The median pass is one of the passes: never above the slowest call times the keys.
        const double median = rows[i].at("lookup_median_us").get<double>();
        EXPECT_GT(median, 0.0);
        EXPECT_LE(median, rows[i].at("lookup_max_us").get<double>() * static_cast<double>(expected[i]));
    }
    r = run("semget-keys --keys 5 --process-per-call --duration 0.1");
    ASSERT_EQ(r.status, 0) << r.out;
    j = resultOf(r);
    EXPECT_EQ(j.at("process_per_call"), true);
    EXPECT_EQ(j.at("rows").size(), 1u);
}

TEST(Workloads, DpathStress)
{
    Outcome r = run("dpath-stress --readers 2 --renamers 1 --depth 4 --duration 0.3");
    ASSERT_EQ(r.status, 0) << r.out;
    auto j = resultOf(r);
    expectSane(j, "dpath-stress");
    EXPECT_GT(j.at("renames").get<uint64_t>(), 0u);
}

// A chain deeper than any path mkdir takes (2000 levels, ~4,000 bytes from
// the temp root) is built, read by getcwd and removed; paused renamers
// rename once per pause.
TEST(Workloads, DpathStressDeepChainAndRarePauses)
{
    std::set<std::string> before;
    for (const auto& e : std::filesystem::directory_iterator("/tmp"))
        before.insert(e.path().filename().string());
    Outcome r = run("dpath-stress --readers 1 --renamers 1 --rename-pause 100 --depth 2000 --duration 0.5");
    ASSERT_EQ(r.status, 0) << r.out;
    auto j = resultOf(r);
    expectSane(j, "dpath-stress");
    EXPECT_EQ(j.at("depth"), 2000);
    const auto renames = j.at("renames").get<uint64_t>();
    EXPECT_GE(renames, 2u);
    EXPECT_LE(renames, 20u) << "a pair of renames per 100 ms pause over 0.5 s";
    for (const auto& e : std::filesystem::directory_iterator("/tmp")) {
        const auto name = e.path().filename().string();
        EXPECT_FALSE(name.rfind("lockscope-dpath-", 0) == 0 && !before.count(name)) << "left behind: " << name;
    }
}

TEST(Workloads, BadArgumentsAreOneLineAndExitTwo)
{
    for (const char* args :
         {"semop-multi --threads 0", "sem-postwait --pairs x", "sem-postwait --sleepers -1", "timer-stress --bogus",
          "semget-keys --keys 1,,2", "dpath-stress --duration", "semop-multi --multi --sems 1", "semop-multi extra"}) {
        Outcome r = run(args);
        EXPECT_EQ(r.status, 2) << args;
        EXPECT_EQ(std::count(r.out.begin(), r.out.end(), '\n'), 1) << args << ": " << r.out;
        EXPECT_NE(r.out.find("--help"), std::string::npos) << r.out;
    }
    for (const char* program : {"semop-multi", "sem-postwait", "timer-stress", "semget-keys", "dpath-stress"}) {
        Outcome help = run(std::string(program) + " --help");
        EXPECT_EQ(help.status, 0) << program;
        EXPECT_NE(help.out.find("--duration"), std::string::npos) << program << ": " << help.out;
    }
}

// SIGTERM mid-run: the workload reports what it did and removes its IPC set.
TEST(Workloads, SigtermRemovesTheSemaphoreSet)
{
    std::string exe = std::string(LOCKSCOPE_WORKLOAD_DIR) + "/sem-postwait";
    int fds[2];
    ASSERT_EQ(pipe(fds), 0);
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_adddup2(&fa, fds[1], 1);
    posix_spawn_file_actions_addclose(&fa, fds[0]);
    std::string a0 = exe, a1 = "--pairs", a2 = "37", a3 = "--duration", a4 = "60";
    char* argv[] = {a0.data(), a1.data(), a2.data(), a3.data(), a4.data(), nullptr};
    pid_t pid = 0;
    ASSERT_EQ(posix_spawn(&pid, exe.c_str(), &fa, nullptr, argv, environ), 0);
    posix_spawn_file_actions_destroy(&fa);
    close(fds[1]);

    // Our set is the one whose semaphores the workload operated on (their
    // sempid is its pid): unique even while another run of this test, or
    // another workload, has a set of the same size.
    auto ourSet = [pid] {
        std::ifstream in("/proc/sysvipc/sem");
        std::string line;
        std::getline(in, line);
        while (std::getline(in, line)) {
            std::istringstream f(line);
            long key = 0, semid = 0, perms = 0, nsems = 0;
            f >> key >> semid >> perms >> nsems;
            for (long k = 0; k < nsems; ++k)
                if (semctl(static_cast<int>(semid), static_cast<int>(k), GETPID) == pid)
                    return static_cast<int>(semid);
        }
        return -1;
    };
    int semid = -1;
    for (int i = 0; i < 20000 && (semid = ourSet()) < 0; ++i)
        usleep(1000);
    ASSERT_GE(semid, 0) << "the workload never created its set";
    kill(pid, SIGTERM);
    std::string out;
    char buf[4096];
    ssize_t n = 0;
    while ((n = read(fds[0], buf, sizeof buf)) > 0)
        out.append(buf, static_cast<size_t>(n));
    close(fds[0]);
    int status = 0;
    ASSERT_EQ(waitpid(pid, &status, 0), pid);
    ASSERT_TRUE(WIFEXITED(status)) << "killed by signal instead of cleaning up";
    EXPECT_EQ(WEXITSTATUS(status), 0);
    auto j = resultOf({0, out});
    EXPECT_EQ(j.at("interrupted"), true);
    errno = 0;
    EXPECT_EQ(semctl(semid, 0, GETVAL), -1) << "semaphore set " << semid << " leaked";
    EXPECT_TRUE(errno == EINVAL || errno == EIDRM) << std::strerror(errno);
}
