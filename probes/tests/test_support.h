// SPDX-License-Identifier: GPL-2.0-or-later
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <thread>
#include <vector>

#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <gtest/gtest.h>

#include "lockscope/probes/probes.h"

// BPF tests need root; without it they skip and say why.
#define LOCKSCOPE_REQUIRE_ROOT()                                                                             \
    do {                                                                                                     \
        if (geteuid() != 0)                                                                                  \
            GTEST_SKIP() << "skipped: loading BPF programs needs root (CI runs these tests as root)";        \
    } while (0)

// One per-CPU counter of a skeleton's counters map (ls_counter), summed over the CPUs.
inline uint64_t sumCounter(int counters_fd, uint32_t key)
{
    std::vector<uint64_t> v(static_cast<size_t>(libbpf_num_possible_cpus()));
    if (bpf_map_lookup_elem(counters_fd, &key, v.data()) != 0)
        return UINT64_MAX;
    uint64_t s = 0;
    for (uint64_t x : v)
        s += x;
    return s;
}

// Every probe off and only this process followed: a test turns on what it checks.
inline lockscope::probes::Options quietOptions()
{
    lockscope::probes::Options o;
    o.wait = lockscope::probes::Backend::Off;
    o.hold = lockscope::probes::Backend::Off;
    o.functions = lockscope::probes::Backend::Off;
    o.syscalls = false;
    o.cpu_frequency_hz = 0;
    o.tgids = { static_cast<uint32_t>(getpid()) };
    return o;
}

// For a test whose drainer thread counts its drains in `drains`: waits until
// a drain begun after this call has ended (the one running now may have
// begun before), so what the caller did before is drained whatever the
// scheduling. Gives up after 10 s: the test's counts then say what is missing.
inline void awaitDrainBegunAfterNow(const std::atomic<unsigned>& drains)
{
    const unsigned seen = drains.load();
    const auto giveUp = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (drains.load() < seen + 2 && std::chrono::steady_clock::now() < giveUp)
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
}
