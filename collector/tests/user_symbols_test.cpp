// SPDX-License-Identifier: GPL-2.0-or-later
#include <gtest/gtest.h>

#include <sys/wait.h>
#include <unistd.h>

#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "lockscope/record/user_symbols.h"

extern "C" __attribute__((noinline, used)) int lockscope_record_test_marker(int x)
{
    asm volatile("" ::: "memory");
    return x * 3 + 1;
}

namespace {

bool libbccMapped()
{
    std::ifstream maps("/proc/self/maps");
    std::string all((std::istreambuf_iterator<char>(maps)), std::istreambuf_iterator<char>());
    return all.find("libbcc.so") != std::string::npos;
}

// Before main, with every library the binary is linked to loaded (this
// binary links lockscope_record_core as lockscope does).
const bool kLibbccMappedAtStart = libbccMapped();

} // namespace

// libbcc (and the LLVM libraries it brings) is opened on first use, not linked.
TEST(UserSymbols, LibbccIsOpenedOnFirstUseNotLinked)
{
    EXPECT_FALSE(kLibbccMappedAtStart) << "libbcc linked again: every command pays for loading LLVM";
    EXPECT_EQ(lockscope::record::UserSymbols::unavailable(), "") << "libbpfcc is a build dependency";
    EXPECT_TRUE(libbccMapped());
}

TEST(UserSymbols, ResolvesOwnFunction)
{
    lockscope::record::UserSymbols syms;
    syms.prepare(getpid());
    auto addr = reinterpret_cast<uint64_t>(&lockscope_record_test_marker);
    auto f = syms.resolve(getpid(), addr + 2);
    EXPECT_EQ(f.function, "lockscope_record_test_marker");
    EXPECT_EQ(f.offset, 2u);
    EXPECT_NE(f.module.str().find("record_unit_tests"), std::string::npos) << f.module;
    EXPECT_EQ(f.address, addr + 2);
}

TEST(UserSymbols, ResolvesLibcFunction)
{
    lockscope::record::UserSymbols syms;
    auto addr = reinterpret_cast<uint64_t>(&getpid);
    auto f = syms.resolve(getpid(), addr);
    EXPECT_NE(f.function.str().find("getpid"), std::string::npos) << f.function;
    EXPECT_NE(f.module.str().find("libc"), std::string::npos) << f.module;
}

TEST(UserSymbols, UnknownAddressIsUnresolvedNotACrash)
{
    lockscope::record::UserSymbols syms;
    auto f = syms.resolve(getpid(), 0x10);
    EXPECT_TRUE(f.function.empty());
    EXPECT_EQ(f.address, 0x10u);
}

namespace {

// A forked copy of this process, blocked until its pipe closes.
struct Child {
    pid_t pid = -1;
    int release = -1;
};

Child forkWaitingChild()
{
    int fds[2];
    if (pipe(fds) != 0)
        return {};
    pid_t pid = fork();
    if (pid == 0) {
        close(fds[1]);
        char c;
        while (read(fds[0], &c, 1) > 0) {
        }
        _exit(0);
    }
    close(fds[0]);
    return {pid, fds[1]};
}

void endChild(const Child& c)
{
    close(c.release);
    waitpid(c.pid, nullptr, 0);
}

} // namespace

// Many short-lived processes: the caches stay at the limit, and an exited
// process retired with its addresses still resolves them after it is gone.
TEST(UserSymbols, ShortLivedProcessesStayBoundedAndResolveAfterExit)
{
    constexpr size_t kLimit = 8;
    constexpr int kProcesses = 60;
    lockscope::record::UserSymbols syms(kLimit);
    const auto addr = reinterpret_cast<uint64_t>(&lockscope_record_test_marker) + 2;
    std::vector<pid_t> exited;
    for (int i = 0; i < kProcesses; ++i) {
        Child c = forkWaitingChild();
        ASSERT_GT(c.pid, 0);
        syms.prepare(c.pid);
        EXPECT_LE(syms.cachedProcesses(), kLimit);
        endChild(c);
        syms.retire(c.pid, {addr});
        exited.push_back(c.pid);
    }
    EXPECT_EQ(syms.cachedProcesses(), 0u) << "retired processes kept their caches";
    EXPECT_EQ(syms.lostExited(), 0u);
    for (pid_t pid : exited) {
        auto f = syms.resolve(pid, addr);
        EXPECT_EQ(f.function, "lockscope_record_test_marker") << "pid " << pid;
        EXPECT_EQ(f.offset, 2u);
    }
    EXPECT_EQ(syms.cachedProcesses(), 0u) << "resolving a retired process made a cache again";
}

// A process already gone when it is first seen gets no cache (there is no
// /proc/PID/maps to read) and its addresses stay unresolved.
TEST(UserSymbols, AProcessGoneBeforeItIsPreparedGetsNoCache)
{
    lockscope::record::UserSymbols syms(8);
    Child c = forkWaitingChild();
    ASSERT_GT(c.pid, 0);
    endChild(c);
    syms.prepare(c.pid);
    EXPECT_EQ(syms.cachedProcesses(), 0u);
    auto f = syms.resolve(c.pid, reinterpret_cast<uint64_t>(&lockscope_record_test_marker));
    EXPECT_TRUE(f.function.empty()) << f.function;
    EXPECT_EQ(syms.cachedProcesses(), 0u);
}

// At the limit the least recently used cache goes; a live process it belonged
// to is prepared again on its next resolve, an exited one is counted as lost.
TEST(UserSymbols, TheLimitDropsTheLeastRecentlyUsedCache)
{
    lockscope::record::UserSymbols syms(2);
    const auto addr = reinterpret_cast<uint64_t>(&lockscope_record_test_marker);
    Child live = forkWaitingChild(), gone = forkWaitingChild();
    ASSERT_GT(live.pid, 0);
    ASSERT_GT(gone.pid, 0);
    syms.prepare(live.pid);
    syms.prepare(gone.pid);
    endChild(gone);
    syms.resolve(live.pid, addr); // live is now the most recent: gone goes first
    syms.prepare(getpid());
    EXPECT_EQ(syms.cachedProcesses(), 2u);
    EXPECT_EQ(syms.lostExited(), 1u);
    Child other = forkWaitingChild();
    ASSERT_GT(other.pid, 0);
    syms.prepare(other.pid); // evicts live, whose process still runs
    EXPECT_EQ(syms.lostExited(), 1u);
    EXPECT_EQ(syms.resolve(live.pid, addr).function, "lockscope_record_test_marker");
    EXPECT_LE(syms.cachedProcesses(), 2u);
    endChild(other); // first: it holds a copy of live's pipe
    endChild(live);
}
