// SPDX-License-Identifier: GPL-2.0-or-later
// Holds a kernel mutex on purpose, for the lock-owner tests: a thread named
// "ls-owner" writes to a pipe from a buffer whose page is missing behind a
// userfaultfd. pipe_write copies from user memory with pipe->mutex held, so
// the owner sleeps in handle_userfault holding the mutex until the main
// thread supplies the page. A second thread ("ls-waiter") writes to the same
// pipe meanwhile and sleeps in mutex_lock: one contended mutex whose owner
// and its stack are known. The page is supplied only once /proc shows the
// waiter asleep (state D), so the wait really happened; no timing involved.
//
// With "rwsem", both write to one memfd instead: shmem's write path holds
// the inode's i_rwsem for writing while it faults the buffer in.
//
// With "rtnl", a global mutex with a symbol (rtnl_mutex, named by
// --lock-names where kallsyms lists data): both ask SIOCGIFCONF, whose
// dev_ifconf copies each IPv4 address out to the buffer with rtnl_lock
// held. Loopback is brought up first (needs root) so there is an address.
//
//   owner-workload [rwsem|rtnl] [linger]   prints {"lockscope_result": {"owner_tid": T, "waiter_tid": W}}
//
// With "linger" it then waits for a signal, for tests that need the process
// alive after the wait (record reads a workload's user symbols while it runs).
#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <fstream>
#include <linux/userfaultfd.h>
#include <net/if.h>
#include <poll.h>
#include <pthread.h>
#include <string>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <thread>
#include <unistd.h>

#include "raw_syscall.h"

namespace {

[[noreturn]] void die(const char* what)
{
    std::fprintf(stderr, "owner-workload: %s: %s\n", what, std::strerror(errno));
    std::exit(1);
}


// Third field of /proc/self/task/TID/stat: R, S, D, ...
char taskState(pid_t tid)
{
    std::ifstream f("/proc/self/task/" + std::to_string(tid) + "/stat");
    std::string line;
    std::getline(f, line);
    const auto paren = line.rfind(')');
    return paren == std::string::npos || paren + 2 >= line.size() ? '?' : line[paren + 2];
}

void waitForState(pid_t tid, char state)
{
    while (taskState(tid) != state)
        usleep(1000);
}

// Loopback up: its NETDEV_UP gives it 127.0.0.1, an address for SIOCGIFCONF to copy out.
void loopbackUp(int sock)
{
    ifreq r {};
    std::strncpy(r.ifr_name, "lo", IFNAMSIZ - 1);
    if (ioctl(sock, SIOCGIFFLAGS, &r) != 0)
        die("SIOCGIFFLAGS lo");
    if (r.ifr_flags & IFF_UP)
        return;
    r.ifr_flags = static_cast<short>(r.ifr_flags | IFF_UP);
    if (ioctl(sock, SIOCSIFFLAGS, &r) != 0)
        die("SIOCSIFFLAGS lo up");
}

// SIOCGIFCONF into buf: the address copy faults with rtnl_mutex held.
bool interfaceList(int sock, char* buf, size_t len)
{
    ifconf c {};
    c.ifc_len = static_cast<int>(len);
    c.ifc_buf = buf;
    return ioctl(sock, SIOCGIFCONF, &c) == 0;
}

} // namespace

// The waiter's write, whose syscall instruction is its own (raw_syscall.h):
// record_user_test.cpp finds this name innermost in the wait's user stack.
extern "C" __attribute__((noinline)) long ls_test_waiter_write(int fd)
{
    const char c = 'x';
    return rawSyscall3(SYS_write, fd, reinterpret_cast<long>(&c), 1);
}

int main(int argc, char** argv)
{
    bool rwsem = false, rtnl = false, linger = false;
    for (int i = 1; i < argc; ++i) {
        rwsem |= std::strcmp(argv[i], "rwsem") == 0;
        rtnl |= std::strcmp(argv[i], "rtnl") == 0;
        linger |= std::strcmp(argv[i], "linger") == 0;
    }
    const int uffd = static_cast<int>(syscall(SYS_userfaultfd, O_CLOEXEC));
    if (uffd < 0)
        die("userfaultfd");
    uffdio_api api {};
    api.api = UFFD_API;
    if (ioctl(uffd, UFFDIO_API, &api) != 0)
        die("UFFDIO_API");
    const auto page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
    auto* buf = static_cast<char*>(mmap(nullptr, page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
    if (buf == MAP_FAILED)
        die("mmap");
    uffdio_register reg {};
    reg.range = { reinterpret_cast<unsigned long>(buf), page };
    reg.mode = UFFDIO_REGISTER_MODE_MISSING;
    if (ioctl(uffd, UFFDIO_REGISTER, &reg) != 0)
        die("UFFDIO_REGISTER");
    int pipefd[2];
    if (rtnl) {
        pipefd[1] = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
        if (pipefd[1] < 0)
            die("socket");
        loopbackUp(pipefd[1]);
    } else if (rwsem) {
        pipefd[1] = memfd_create("ls-owner", MFD_CLOEXEC);
        if (pipefd[1] < 0)
            die("memfd_create");
    } else if (pipe(pipefd) != 0) {
        die("pipe");
    }

    std::atomic<pid_t> ownerTid { 0 }, waiterTid { 0 };
    std::thread owner([&] {
        pthread_setname_np(pthread_self(), "ls-owner");
        ownerTid = gettid();
        if (rtnl ? !interfaceList(pipefd[1], buf, page) // faults inside dev_ifconf, rtnl_mutex held
                 : write(pipefd[1], buf, 64) != 64)      // faults inside pipe_write, mutex held
            die("owner write");
    });
    // The fault arrives once the owner holds the mutex and sleeps in it.
    pollfd p { uffd, POLLIN, 0 };
    if (poll(&p, 1, -1) != 1)
        die("poll");
    uffd_msg msg {};
    if (read(uffd, &msg, sizeof msg) != static_cast<ssize_t>(sizeof msg) || msg.event != UFFD_EVENT_PAGEFAULT)
        die("read uffd");

    std::thread waiter([&] {
        pthread_setname_np(pthread_self(), "ls-waiter");
        waiterTid = gettid();
        static char list[4096];
        if (rtnl ? !interfaceList(pipefd[1], list, sizeof list) // sleeps on rtnl_mutex
                 : ls_test_waiter_write(pipefd[1]) != 1)        // sleeps on pipe->mutex
            die("waiter write");
    });
    while (waiterTid == 0)
        usleep(1000);
    waitForState(waiterTid, 'D');

    static char filler[65536];
    std::memset(filler, 'o', sizeof filler);
    uffdio_copy copy {};
    copy.dst = reinterpret_cast<unsigned long>(buf);
    copy.src = reinterpret_cast<unsigned long>(filler);
    copy.len = page;
    if (ioctl(uffd, UFFDIO_COPY, &copy) != 0)
        die("UFFDIO_COPY");
    owner.join();
    waiter.join();
    std::printf("{\"lockscope_result\": {\"owner_tid\": %d, \"waiter_tid\": %d}}\n", int(ownerTid), int(waiterTid));
    std::fflush(stdout);
    while (linger)
        pause();
    return 0;
}
