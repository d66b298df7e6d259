// SPDX-License-Identifier: GPL-2.0-or-later
#include "contention_gen.h"

#include <atomic>
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <stdexcept>
#include <string>
#include <system_error>
#include <thread>
#include <vector>

#include <fcntl.h>
#include <unistd.h>

namespace lockscope::probes::test {

uint64_t fileWriteContention(unsigned threads, unsigned iterations)
{
    char path[] = "/tmp/lockscope-probes-XXXXXX";
    const int fd = mkstemp(path);
    if (fd < 0)
        throw std::runtime_error(std::string("mkstemp: ") + std::system_category().message(errno));
    unlink(path);
    std::atomic<uint64_t> writes { 0 };
    std::vector<std::thread> pool;
    for (unsigned t = 0; t < threads; ++t) {
        pool.emplace_back([&] {
            std::vector<char> buf(16384, 'x');
            for (unsigned i = 0; i < iterations; ++i) {
                if (pwrite(fd, buf.data(), buf.size(), static_cast<off_t>((i % 64) * buf.size())) > 0)
                    writes.fetch_add(1, std::memory_order_relaxed);
                if (i % 64 == 63)
                    if (ftruncate(fd, 0) != 0)
                        break;
            }
        });
    }
    for (auto& th : pool)
        th.join();
    close(fd);
    return writes.load();
}

uint64_t timerCalls(unsigned iterations)
{
    timer_t timer {};
    sigevent sev {};
    sev.sigev_notify = SIGEV_NONE;
    if (timer_create(CLOCK_MONOTONIC, &sev, &timer) != 0)
        throw std::runtime_error(std::string("timer_create: ") + std::system_category().message(errno));
    uint64_t calls = 0;
    itimerspec cur {};
    for (unsigned i = 0; i < iterations; ++i)
        if (timer_gettime(timer, &cur) == 0)
            ++calls;
    timer_delete(timer);
    return calls;
}

} // namespace lockscope::probes::test
