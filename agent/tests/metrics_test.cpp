// SPDX-License-Identifier: GPL-2.0-or-later
// The exposition read by Prometheus's own linter (`promtool check metrics`).
#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <string>
#include <sys/wait.h>
#include <unistd.h>

#include "lockscope/agent/metrics.h"
#include "lockscope/util/executable.h"

namespace lockscope::agent {
namespace {

Capture slice()
{
    Capture c;
    for (const char* key : {"spinlock@sem_lock", "rwsem@weird \"quoted\\name\"\n", "mutex@x"}) {
        Lock l;
        l.key = key;
        l.type = "spinlock";
        l.name = "&task_struct";
        l.cgroup = "/system.slice/a b";
        for (uint64_t ns : {100ull, 3000ull, 70000ull, 5000000000ull, 200000000000ull})
            l.wait.add(ns);
        c.locks.push_back(l);
    }
    c.cpu.samples = 100;
    c.cpu.lock_samples = 7;
    c.cpu.bpf_samples = 3;
    c.cpu.frequency_hz = 199;
    c.stats.events = 15;
    LatencyEntry sem{"semtimedop", {}, 2};
    for (uint64_t ns : {300ull, 5000ull, 5000ull})
        sem.latency.add(ns);
    c.syscalls.push_back(sem);
    LatencyEntry sampled{"timer_gettime", {}, 0, 4, 40}; // 1 in 4 timed, 40 calls counted
    sampled.latency.add(1000);
    c.syscalls.push_back(sampled);
    LatencyEntry fn{"__lock_timer", {}, 0};
    fn.latency.add(700);
    c.functions.push_back(fn);
    return c;
}

std::string sampleText()
{
    LockSeries series(2);
    series.add(slice());
    series.add(slice());
    AgentHealth h;
    h.windows = 2;
    h.resident_bytes = 40u << 20;
    h.heap_in_use_bytes = 12345678;
    h.probes = {ProbeStatus{"lock_contention", "lock:contention_begin", "tp_btf", true, ""},
                ProbeStatus{"cpu_sampling", "cpu-clock", "perf_event", true, ""}};
    h.bpf_stats_enabled = true;
    h.programs = {{"wait_begin_btf", 1000, 10}};
    return renderMetrics(series, slice(), h);
}

TEST(Metrics, PromtoolFindsNothingToSay)
{
    const std::string promtool = util::findExecutable("promtool");
    if (promtool.empty())
        GTEST_SKIP() << "no promtool (Debian package: prometheus)";
    const std::string path = ::testing::TempDir() + "/lockscope-metrics-" + std::to_string(::getpid()) + ".txt";
    std::ofstream(path) << sampleText();
    const std::string cmd = promtool + " check metrics < " + path + " 2>&1";
    FILE* p = popen(cmd.c_str(), "r");
    ASSERT_NE(p, nullptr);
    std::string out;
    char buf[512];
    while (size_t n = fread(buf, 1, sizeof buf, p))
        out.append(buf, n);
    const int status = pclose(p);
    std::remove(path.c_str());
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << out;
    EXPECT_EQ(out, "") << sampleText();
}

TEST(Metrics, HistogramBucketsAreCumulativeAndEndAtTheCount)
{
    const std::string text = sampleText();
    // Equal waits: the first two keys in order are shown.
    const std::string series = "lockscope_lock_wait_duration_seconds_bucket{lock=\"mutex@x\"";
    // The shown lock's second window: five waits, 100 ns and 3 us under 4.1 us,
    // 200 s beyond the last bound.
    EXPECT_NE(text.find(series + ",lock_type=\"spinlock\",lock_name=\"&task_struct\",cgroup=\"/system.slice/a b\",le=\"2.56e-07\"} 1"),
              std::string::npos)
        << text;
    EXPECT_NE(text.find(series + ",lock_type=\"spinlock\",lock_name=\"&task_struct\",cgroup=\"/system.slice/a b\",le=\"68.719476736\"} 4"),
              std::string::npos)
        << text;
    EXPECT_NE(text.find(series + ",lock_type=\"spinlock\",lock_name=\"&task_struct\",cgroup=\"/system.slice/a b\",le=\"+Inf\"} 5"),
              std::string::npos);
    EXPECT_NE(text.find("lock=\"rwsem@weird \\\"quoted\\\\name\\\"\\n\""), std::string::npos) << "escaped label";
    EXPECT_NE(text.find("lockscope_cpu_samples_total{state=\"spin\"} 7"), std::string::npos);
    EXPECT_NE(text.find("lockscope_cpu_samples_total{state=\"bpf\"} 3"), std::string::npos);
}

TEST(Metrics, MemoryIsResidentAndLiveHeap)
{
    const std::string text = sampleText();
    EXPECT_NE(text.find("# TYPE lockscope_agent_resident_memory_bytes gauge\nlockscope_agent_resident_memory_bytes "
                        "41943040\n"),
              std::string::npos) << text;
    EXPECT_NE(text.find("# TYPE lockscope_agent_heap_in_use_bytes gauge\nlockscope_agent_heap_in_use_bytes 12345678\n"),
              std::string::npos) << text;
}

TEST(Metrics, SyscallsAndFunctionsHaveCallsErrorsAndDurations)
{
    const std::string text = sampleText();
    EXPECT_NE(text.find("lockscope_syscall_calls_total{syscall=\"semtimedop\"} 3\n"), std::string::npos) << text;
    EXPECT_NE(text.find("lockscope_syscall_errors_total{syscall=\"semtimedop\"} 2\n"), std::string::npos);
    EXPECT_NE(text.find("lockscope_syscall_duration_seconds_bucket{syscall=\"semtimedop\",le=\"5.12e-07\"} 1\n"),
              std::string::npos);
    EXPECT_NE(text.find("lockscope_syscall_duration_seconds_bucket{syscall=\"semtimedop\",le=\"8.192e-06\"} 3\n"),
              std::string::npos);
    EXPECT_NE(text.find("lockscope_syscall_duration_seconds_sum{syscall=\"semtimedop\"} 1.03"),
              std::string::npos);
    // Sampled: every call counted, the histogram has the timed one.
    EXPECT_NE(text.find("lockscope_syscall_calls_total{syscall=\"timer_gettime\"} 40\n"), std::string::npos);
    EXPECT_NE(text.find("lockscope_syscall_duration_seconds_count{syscall=\"timer_gettime\"} 1\n"),
              std::string::npos);
    EXPECT_NE(text.find("lockscope_function_calls_total{function=\"__lock_timer\"} 1\n"), std::string::npos);
    EXPECT_NE(text.find("# TYPE lockscope_function_duration_seconds histogram\n"), std::string::npos);
    EXPECT_EQ(text.find("lockscope_function_errors_total"), std::string::npos) << "functions' returns are not read";
}

// Untimed waits no timed one could lend a time to are lost, and said apart
// from the pending waits that overflowed (Stats::lost holds both).
TEST(Metrics, LostEventsAreSplitByWhy)
{
    Capture c = slice();
    c.stats.lost = 10;
    c.stats.untimed_unplaced = 3;
    const std::string text = renderMetrics(LockSeries(2), c, AgentHealth{});
    EXPECT_NE(text.find("lockscope_agent_events_lost_total{reason=\"nesting\"} 7\n"), std::string::npos) << text;
    EXPECT_NE(text.find("lockscope_agent_events_lost_total{reason=\"untimed_unplaced\"} 3\n"), std::string::npos);
}

// Walks refused because the stack's bucket held another stack, or because
// another walk ran on the CPU, are said apart from the other failed walks
// (Stats::stack_failures holds all three).
TEST(Metrics, StacksNotTakenAreSplitByWhy)
{
    Capture c = slice();
    c.stats.stack_failures = 12;
    c.stats.stack_collisions = 5;
    c.stats.stacks_nested = 3;
    c.stats.stacks_spilled = 7;
    const std::string text = renderMetrics(LockSeries(2), c, AgentHealth{});
    EXPECT_NE(text.find("lockscope_agent_stacks_not_taken_total{reason=\"failed\"} 4\n"), std::string::npos) << text;
    EXPECT_NE(text.find("lockscope_agent_stacks_not_taken_total{reason=\"collided\"} 5\n"), std::string::npos);
    EXPECT_NE(text.find("lockscope_agent_stacks_not_taken_total{reason=\"nested\"} 3\n"), std::string::npos);
    EXPECT_NE(text.find("lockscope_agent_stacks_spilled_total 7\n"), std::string::npos);
}

TEST(Metrics, NoLatencyFamiliesWithoutTheProbes)
{
    Capture c = slice();
    c.syscalls.clear();
    c.functions.clear();
    const std::string text = renderMetrics(LockSeries(2), c, AgentHealth{});
    EXPECT_EQ(text.find("lockscope_syscall_"), std::string::npos);
    EXPECT_EQ(text.find("lockscope_function_"), std::string::npos);
}

} // namespace
} // namespace lockscope::agent
