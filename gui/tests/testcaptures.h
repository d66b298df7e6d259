// SPDX-License-Identifier: GPL-2.0-or-later
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "lockscope/capture/capture.h"

namespace lockscope::gui::test {

// A stack from folded text, outermost first ("entry;do_semtimedop;sem_lock"),
// stored innermost first as Stack::frames are.
inline Stack foldedStack(uint32_t id, const std::string& folded)
{
    Stack s;
    s.id = id;
    size_t start = 0;
    std::vector<Frame> outerFirst;
    while (start <= folded.size()) {
        const size_t end = folded.find(';', start);
        Frame f;
        f.function = folded.substr(start, end == std::string::npos ? std::string::npos : end - start);
        f.offset = 0x10;
        outerFirst.push_back(f);
        if (end == std::string::npos)
            break;
        start = end + 1;
    }
    s.frames.assign(outerFirst.rbegin(), outerFirst.rend());
    return s;
}

// waits of `ns` each, `n` times, on one site.
inline LockSite site(uint32_t stackId, uint64_t waitNs, uint64_t waits, uint64_t holdNs = 0, uint64_t holds = 0)
{
    LockSite s;
    s.stack_id = stackId;
    if (waits)
        s.wait.add(waitNs, waits);
    if (holds)
        s.hold.add(holdNs, holds);
    return s;
}

inline Lock lockOf(std::string key, std::string type, std::vector<LockSite> sites)
{
    Lock l;
    l.key = std::move(key);
    l.type = std::move(type);
    for (auto& s : sites) {
        l.wait.merge(s.wait);
        l.hold.merge(s.hold);
    }
    l.sites = std::move(sites);
    return l;
}

// The sem_lock story: "baseline" spends long waits in the IPC spinlock,
// "patched" (scale < 1) waits much less there while rename_lock is unchanged.
inline Capture semCapture(const std::string& label, double scale)
{
    Capture c;
    c.meta.label = label;
    c.meta.kernel_release = label == "baseline" ? "6.18.0-base" : "6.18.0-sem";
    c.meta.cpu_model = "Test CPU";
    c.meta.cpu_count = 2;
    c.meta.duration_s = 10.0;
    c.stats.events = 100000;
    c.stacks.push_back(foldedStack(1, "entry_SYSCALL_64;do_syscall_64;__x64_sys_semtimedop;do_semtimedop;sem_lock;"
                                      "_raw_spin_lock;queued_spin_lock_slowpath"));
    c.stacks.push_back(foldedStack(2, "entry_SYSCALL_64;do_syscall_64;__x64_sys_semget;ipcget;ipc_lock_object;"
                                      "_raw_spin_lock"));
    c.stacks.push_back(foldedStack(3, "entry_SYSCALL_64;do_syscall_64;__x64_sys_rename;lock_rename;"
                                      "_raw_spin_lock"));
    const auto waits = static_cast<uint64_t>(20000 * scale);
    c.locks.push_back(lockOf("spinlock@sem_lock", "spinlock",
                             {site(1, 4000, waits, 900, waits), site(2, 1500, waits / 4 + 1, 600, waits / 4 + 1)}));
    c.locks.push_back(lockOf("rename_lock", "spinlock", {site(3, 2500, 3000, 1200, 3000)}));
    c.locks.push_back(lockOf("mutex@ipcget", "mutex", {site(2, 70000, 40)}));
    c.cpu.frequency_hz = 99;
    c.cpu.samples = 1000;
    c.cpu.lock_samples = static_cast<uint64_t>(400 * scale);
    c.workload.command = {"semop-bench", "--threads", "2"};
    c.workload.exit_status = 0;
    c.workload.results = {{"lockscope_result", {{"ops_per_sec", 100000.0 / scale}}}};
    return c;
}

inline LatencyEntry latencyEntry(std::string name, uint64_t ns, uint64_t times, uint64_t errors = 0)
{
    LatencyEntry e;
    e.name = std::move(name);
    e.latency.add(ns, times);
    e.errors = errors;
    return e;
}

// Two syscalls, semtimedop timed 1 in 16 with every call counted, and one
// kernel function, beside semCapture's locks.
inline Capture latencyCapture()
{
    Capture c = semCapture("baseline", 1.0);
    LatencyEntry sem = latencyEntry("semtimedop", 2000, 3000, 5);
    sem.latency.add(64000, 10);   // mean (6'000'000 + 640'000) / 3010 = 2205 ns
    sem.sample_period = 16;
    sem.all_calls = 50000;
    c.syscalls.push_back(sem);
    c.syscalls.push_back(latencyEntry("timer_gettime", 300, 800));
    LatencyEntry timer = latencyEntry("__lock_timer", 150, 700);
    timer.latency.add(5000, 10);  // mean (105'000 + 50'000) / 710 = 218 ns; p99 = rank 703, a 5 us call
    c.functions.push_back(timer);
    return c;
}

} // namespace lockscope::gui::test
