// SPDX-License-Identifier: GPL-2.0-or-later
#include <algorithm>

#include <gtest/gtest.h>

#include "lockscope/capture/io.h"
#include "lockscope/capture/units.h"
#include "lockscope/reports/render.h"
#include "lockscope/reports/report.h"
#include "test_support.h"

using namespace lockscope;
using namespace lockscope::reports;

TEST(Report, SortsCutsAndFiltersLocks)
{
    const Capture c = readCapture(test::fixture("baseline.lockscope.json"));
    ReportOptions o;
    o.top = 2;
    const Report r = buildReport(c, o);
    ASSERT_EQ(r.locks.size(), 2u);
    EXPECT_EQ(r.lock_count, c.locks.size());
    EXPECT_GE(r.locks[0].wait.total(), r.locks[1].wait.total());
    EXPECT_EQ(r.locks[0].key, "spinlock@sem_lock");
    EXPECT_EQ(r.locks[0].caller.rfind("sem_lock+0x", 0), 0u) << r.locks[0].caller;

    o.top = 0;
    o.sort = SortKey::Count;
    const Report byCount = buildReport(c, o);
    for (size_t i = 1; i < byCount.locks.size(); ++i)
        EXPECT_GE(byCount.locks[i - 1].wait.count(), byCount.locks[i].wait.count());

    o.lock_key = "rename_lock";
    const Report one = buildReport(c, o);
    ASSERT_EQ(one.locks.size(), 1u);
    EXPECT_EQ(one.locks[0].key, "rename_lock");
    o.lock_key = "no_such_lock";
    EXPECT_THROW(buildReport(c, o), std::invalid_argument);
}

// A summary (the GUI's): every capture-wide figure of the full report, no rows.
TEST(Report, SummaryWithoutLockRows)
{
    const Capture c = readCapture(test::fixture("baseline.lockscope.json"));
    ReportOptions o;
    o.top = 0;
    const Report full = buildReport(c, o);
    o.lock_rows = false;
    o.lock_key = "no_such_lock"; // not looked for without rows
    const Report summary = buildReport(c, o);
    EXPECT_TRUE(summary.locks.empty());
    EXPECT_FALSE(full.locks.empty());
    EXPECT_EQ(summary.lock_count, full.lock_count);
    EXPECT_EQ(summary.total_contentions, full.total_contentions);
    EXPECT_EQ(summary.total_wait_ns, full.total_wait_ns);
    EXPECT_EQ(summary.total_hold_ns, full.total_hold_ns);
    EXPECT_EQ(summary.warnings, full.warnings);
    EXPECT_EQ(summary.notes, full.notes);
    EXPECT_EQ(summary.syscalls.size(), full.syscalls.size());
    EXPECT_EQ(summary.functions.size(), full.functions.size());
    EXPECT_EQ(summary.cgroups.size(), full.cgroups.size());
}

// Under stack sampling most waits of a hot lock sit under the one-frame
// "not sampled" stack: they count in every total and path list, but the
// caller column names the hottest walked path.
TEST(Report, CallerIsAWalkedPathWhenUnsampledWaitsDominate)
{
    Capture c = readCapture(test::fixture("baseline.lockscope.json"));
    Lock* sem = nullptr;
    for (auto& l : c.locks)
        if (l.key == "spinlock@sem_lock")
            sem = &l;
    ASSERT_TRUE(sem);
    const uint64_t walkedWait = sem->wait.total(), walkedCount = sem->wait.count();
    uint32_t id = 0;
    for (const auto& st : c.stacks)
        id = std::max(id, st.id + 1);
    c.stacks.push_back(Stack{id, StackKind::Kernel, {Frame{kNotSampledFrame, 0, "", std::nullopt}}});
    LockSite unsampled;
    unsampled.stack_id = id;
    unsampled.wait.add(walkedWait * 4 / 50 + 1000, 50);
    sem->wait.merge(unsampled.wait);
    sem->sites.push_back(unsampled);

    ReportOptions o;
    o.lock_key = "spinlock@sem_lock";
    const Report r = buildReport(c, o);
    ASSERT_EQ(r.locks.size(), 1u);
    EXPECT_EQ(r.locks[0].caller.rfind("sem_lock+0x", 0), 0u) << r.locks[0].caller;
    EXPECT_EQ(r.locks[0].wait.count(), walkedCount + 50);
    ASSERT_FALSE(r.locks[0].paths.empty());
    // The unwalked waits are shared out over the walked paths: no pseudo path, the lock's exact total.
    uint64_t pathWaits = 0;
    for (const auto& p : r.locks[0].paths) {
        EXPECT_NE(p.frames, std::vector<std::string>{kNotSampledFrame});
        pathWaits += p.count;
    }
    EXPECT_EQ(pathWaits, walkedCount + 50);
    EXPECT_TRUE(r.locks[0].walked_waits.sampled());
    EXPECT_EQ(r.locks[0].walked_waits.all, walkedCount + 50);
    EXPECT_NE(render(r, Format::Text).find("walked of"), std::string::npos);
}

TEST(Report, PathsAddUpAndSharesAreFractions)
{
    const Capture c = readCapture(test::fixture("baseline.lockscope.json"));
    ReportOptions o;
    o.paths_per_lock = 0;
    for (const auto& l : buildReport(c, o).locks) {
        uint64_t sum = 0;
        for (const auto& p : l.paths)
            sum += p.wait_ns;
        EXPECT_EQ(sum, l.wait.total()) << l.key;
    }
}

TEST(Report, WarnsAboutEmptyCapturesAndLoss)
{
    Capture c;
    c.stats.lost = 5;
    const Report r = buildReport(c);
    ASSERT_GE(r.warnings.size(), 2u);
    EXPECT_NE(r.warnings[0].find("5 events lost"), std::string::npos);
    EXPECT_NE(r.warnings.back().find("no lock, syscall or CPU data"), std::string::npos);
}

// The observer's own cost: the share of CPU samples running BPF, in every
// format, and nothing about it when the capture saw none.
TEST(Report, ShowsTheCpuRunningBpf)
{
    Capture c;
    c.cpu.frequency_hz = 99;
    c.cpu.samples = 1000;
    c.cpu.lock_samples = 100;
    EXPECT_EQ(render(buildReport(c), Format::Text).find("BPF"), std::string::npos);
    EXPECT_EQ(render(buildReport(c), Format::Json).find("cpu_bpf_share"), std::string::npos);
    c.cpu.bpf_samples = 55;
    const Report r = buildReport(c);
    ASSERT_TRUE(r.cpu_bpf_share);
    EXPECT_DOUBLE_EQ(*r.cpu_bpf_share, 0.055);
    EXPECT_NE(render(r, Format::Text).find("CPU in BPF (lockscope's too): 5.50% (55 of 1000 samples)"),
              std::string::npos);
    EXPECT_NE(render(r, Format::Markdown).find("| CPU in BPF (lockscope's too) | 5.50% |"),
              std::string::npos);
    EXPECT_NE(render(r, Format::Html).find("<td>CPU in BPF (lockscope&#39;s too)</td><td>5.50%</td>"),
              std::string::npos);
    EXPECT_NE(render(r, Format::Json).find("\"cpu_bpf_share\": 0.055,"), std::string::npos);
}

// Wait times from a sample are estimates: every format says so, as a note
// (normal sampling), not as a warning (lost data).
TEST(Report, SaysWhenWaitTimesWereEstimatedFromASample)
{
    Capture c;
    c.stats.waits_untimed = 123456;
    const Report r = buildReport(c);
    ASSERT_FALSE(r.notes.empty());
    EXPECT_NE(r.notes[0].find("123456 contended waits counted but not timed (timing budget)"), std::string::npos)
        << r.notes[0];
    for (const auto& w : r.warnings)
        EXPECT_EQ(w.find("not timed"), std::string::npos) << w;
    EXPECT_NE(render(r, Format::Text).find("note: 123456 contended waits"), std::string::npos);
    EXPECT_NE(render(r, Format::Html).find("<div class=\"note\">123456 contended waits"), std::string::npos);
    EXPECT_NE(render(r, Format::Markdown).find("123456 contended waits counted but not timed"), std::string::npos);
    EXPECT_NE(render(r, Format::Html).find("waits counted, time estimated (timing budget)"), std::string::npos);
    EXPECT_EQ(nlohmann::json::parse(render(r, Format::Json))["stats"]["waits_untimed"], 123456);
}

// A lock's tail figures say what they rest on (timing budget) in every
// format: "~" marks an estimate, a "tails" line says from how many timed
// waits, and JSON carries the basis; a figure among the waits always timed
// (exact_wait_ns) is exact.
TEST(Report, SaysWhatALocksTailRestsOn)
{
    Capture c = readCapture(test::fixture("baseline.lockscope.json"));
    ASSERT_FALSE(c.locks.empty());
    Lock& l = c.locks[0];
    const std::string plain = render(buildReport(c), Format::Text);
    EXPECT_EQ(plain.find("tails:"), std::string::npos) << "every wait timed: nothing to say";
    l.wait_untimed = l.wait.count() * 9 / 10;
    c.meta.filters["exact_wait_ns"] = std::to_string(uint64_t { 1 } << 40); // above every wait here
    const Report r = buildReport(c);
    const LockRow& row = *std::find_if(r.locks.begin(), r.locks.end(), [&](const LockRow& x) { return x.key == l.key; });
    EXPECT_FALSE(row.p99_wait_basis.exact);
    EXPECT_FALSE(row.max_wait_basis.exact);
    const std::string text = render(r, Format::Text);
    EXPECT_NE(text.find("tails: p99 wait est. from " + std::to_string(l.wait.count() - l.wait_untimed) + " of "
                        + std::to_string(l.wait.count()) + " timed"),
              std::string::npos) << text;
    EXPECT_NE(text.find("~" + units::duration(double(l.wait.max()))), std::string::npos) << text;
    EXPECT_NE(render(r, Format::Markdown).find("~" + units::duration(double(row.p99_wait_ns))), std::string::npos);
    EXPECT_NE(render(r, Format::Html).find("tails: p99 wait est. from"), std::string::npos);
    const auto j = nlohmann::json::parse(render(r, Format::Json));
    const auto& jl = *std::find_if(j["locks"].begin(), j["locks"].end(), [&](const auto& x) { return x["key"] == l.key; });
    EXPECT_EQ(jl["tail_basis"]["p99_wait"]["exact"], false);
    EXPECT_EQ(jl["tail_basis"]["p99_wait"]["timed"], l.wait.count() - l.wait_untimed);

    // Every wait from 1 ns up always timed: the whole tail is exact again.
    c.meta.filters["exact_wait_ns"] = "1";
    const Report exact = buildReport(c);
    EXPECT_EQ(render(exact, Format::Text).find("tails:"), std::string::npos);
}

// A capture (from before --syscalls) whose syscalls record chose not to time
// says so once in every format, instead of the syscall probe's skip line:
// "not measured", not "none".
TEST(Report, SaysWhenSyscallTimingWasSkipped)
{
    Capture c;
    c.meta.syscall_timing_skipped = "syscall latency not timed by default: fentry refused";
    c.probes.push_back({ "syscalls", "IPC and timer syscalls", "", false, c.meta.syscall_timing_skipped });
    c.probes.push_back({ "function:__lock_timer", "__lock_timer", "fentry", false, "fentry: load failed" });
    EXPECT_EQ(syscallTimingNotMeasured(c.meta, c.probes), c.meta.syscall_timing_skipped);
    const Report r = buildReport(c);
    size_t mentions = 0;
    for (const auto& w : r.warnings)
        mentions += w.find("syscall latency not timed by default") != std::string::npos;
    EXPECT_EQ(mentions, 1u);
    EXPECT_NE(r.warnings[0].find("syscall latency not timed by default: fentry refused"), std::string::npos)
        << r.warnings[0];
    EXPECT_NE(render(r, Format::Text).find("syscall latency not timed by default"), std::string::npos);
    EXPECT_NE(render(r, Format::Html).find("syscall latency not timed by default"), std::string::npos);
    const auto warnings = nlohmann::json::parse(render(r, Format::Json))["warnings"];
    EXPECT_NE(warnings.dump().find("syscall latency not timed by default"), std::string::npos);
    // Other skipped probes keep their own line.
    EXPECT_NE(warnings.dump().find("probe function:__lock_timer"), std::string::npos);
}

// A probe off by choice (--no-cpu) or by default (--hold, --syscalls, ...) is
// listed as off with how to ask for it, never a warning; one the kernel
// refused is a warning. An off syscall probe still says why the latency table
// is empty.
TEST(Report, ProbesOffByChoiceAreListedNotWarnedOf)
{
    Capture c;
    c.probes.push_back({ "syscalls", "IPC and timer syscalls", "", false, offUnlessAskedFor("--syscalls") });
    c.probes.push_back({ "spin_hold", "_raw_spin_lock*", "", false, offUnlessAskedFor("--hold") });
    c.probes.push_back({ "cpu_sampling", "cpu-clock", "", false, kProbeDisabled });
    c.probes.push_back({ "function:__lock_timer", "__lock_timer", "fentry", false, "fentry: load failed" });
    EXPECT_EQ(syscallTimingNotMeasured(c.meta, c.probes), "syscall latency off unless asked for (--syscalls)");
    const Report r = buildReport(c);
    const std::string warnings = nlohmann::json::parse(render(r, Format::Json))["warnings"].dump();
    EXPECT_EQ(warnings.find("syscalls"), std::string::npos) << warnings;
    EXPECT_EQ(warnings.find("spin_hold"), std::string::npos) << warnings;
    EXPECT_EQ(warnings.find("cpu_sampling"), std::string::npos) << warnings;
    EXPECT_NE(warnings.find("probe function:__lock_timer (__lock_timer) skipped: fentry: load failed"), std::string::npos)
        << warnings;
    const std::string text = render(r, Format::Text);
    EXPECT_NE(text.find("[off]      syscalls"), std::string::npos) << text;
    EXPECT_NE(text.find("(off unless asked for (--syscalls))"), std::string::npos) << text;
    EXPECT_NE(text.find("[skipped]  function:__lock_timer"), std::string::npos) << text;
    const std::string html = render(r, Format::Html);
    EXPECT_NE(html.find("<span class=\"muted\">off</span> off unless asked for (--hold)"), std::string::npos);
    EXPECT_NE(html.find("<span class=\"regressed\">skipped</span> fentry: load failed"), std::string::npos);
    // Told not to (--no-syscalls, in captures before it said "off unless asked for"): nothing to explain.
    c.probes[0].reason = kProbeDisabled;
    EXPECT_EQ(syscallTimingNotMeasured(c.meta, c.probes), "");
    // The kernel refused every hook: the latency table is empty for want of one.
    c.probes[0].reason = "fentry: load failed; raw_tp: attach failed";
    EXPECT_EQ(syscallTimingNotMeasured(c.meta, c.probes), "syscall latency not timed: fentry: load failed; raw_tp: attach failed");
}

// Holds released before they were acquired were dropped by the probe: the
// report says how many, in every format.
TEST(Report, SaysHowManyImpossibleHoldsWereDropped)
{
    Capture c;
    c.stats.impossible_holds = 42;
    const Report r = buildReport(c);
    ASSERT_FALSE(r.warnings.empty());
    EXPECT_NE(r.warnings[0].find("42 holds released before they were acquired, dropped"), std::string::npos)
        << r.warnings[0];
    EXPECT_NE(render(r, Format::Html).find("impossible holds dropped"), std::string::npos);
    EXPECT_EQ(nlohmann::json::parse(render(r, Format::Json))["stats"]["impossible_holds"], 42);
    EXPECT_FALSE(nlohmann::json::parse(render(buildReport(Capture {}), Format::Json))["stats"].contains(
        "impossible_holds"));
}

// Owners named without their stack (the wait's stack was not walked either):
// said in the notes, the HTML figures and the JSON stats.
TEST(Report, SaysHowManyOwnersWentWithoutTheirStack)
{
    Capture c;
    c.stats.owner_stacks_unsampled = 7;
    const Report r = buildReport(c);
    ASSERT_FALSE(r.notes.empty());
    EXPECT_NE(r.notes[0].find("7 lock owners named without their stack (stack budget)"), std::string::npos)
        << r.notes[0];
    EXPECT_NE(render(r, Format::Text).find("7 lock owners named without their stack"), std::string::npos);
    EXPECT_NE(render(r, Format::Html).find("lock owners named without their stack"), std::string::npos);
    EXPECT_EQ(nlohmann::json::parse(render(r, Format::Json))["stats"]["owner_stacks_unsampled"], 7);
    EXPECT_FALSE(nlohmann::json::parse(render(buildReport(Capture {}), Format::Json))["stats"].contains(
        "owner_stacks_unsampled"));
}

// The CPUs spin in spinlock code while the attached wait probe saw no
// spinning wait (a VM without paravirt spinlocks): the report says that the
// kernel hides them, and stops saying it once one spinning wait is there.
TEST(Report, SaysWhenTheCpusSpinButNoSpinningWaitWasReported)
{
    Capture c;
    c.probes.push_back({ "lock_contention", "lock:contention_begin,lock:contention_end", "tp_btf", true, "" });
    c.cpu.samples = 1000;
    c.cpu.lock_samples = 300;
    Lock rwsem;
    rwsem.key = "mmap_lock";
    rwsem.type = "rwsem:W";
    rwsem.wait.add(1000);
    c.locks.push_back(rwsem);
    auto said = [](const Capture& cap) {
        for (const auto& w : buildReport(cap).warnings)
            if (w.find("no spinning lock wait was reported") != std::string::npos)
                return w;
        return std::string();
    };
    EXPECT_EQ(said(c).rfind("30% of CPU samples spin in spinlock code", 0), 0u) << said(c);
    Capture few = c;
    few.cpu.lock_samples = 40; // 4%: not a spinning workload
    EXPECT_EQ(said(few), "");
    Capture mutexesOnly = c; // record --lock-type rwsem: no spinlock could be in the table
    mutexesOnly.meta.filters["lock_type"] = "rwsem";
    EXPECT_EQ(said(mutexesOnly), "");
    Capture noProbe = c;
    noProbe.probes[0].attached = false; // its own skip line says why
    EXPECT_EQ(said(noProbe), "");
    Capture seen = c;
    Lock spin;
    spin.key = "spinlock@sem_lock";
    spin.type = "spinlock";
    spin.wait.add(500);
    seen.locks.push_back(spin);
    EXPECT_EQ(said(seen), "");
}

TEST(Report, NumericFieldsFlatten)
{
    const auto f = numericFields(nlohmann::json{{"a", 1}, {"b", {{"c", 2.5}, {"s", "x"}}}, {"arr", {1, 2}}});
    ASSERT_EQ(f.size(), 2u);
    EXPECT_EQ(f[0].name, "a");
    EXPECT_EQ(f[1].name, "b.c");
    EXPECT_DOUBLE_EQ(f[1].value, 2.5);
}
