// SPDX-License-Identifier: GPL-2.0-or-later
#include <gtest/gtest.h>

#include <algorithm>
#include <optional>

#include "lockscope/reports/change_order.h"
#include "lockscope/reports/compare.h"
#include "lockscope/reports/render.h"
#include "test_support.h"

// Run sets: run-to-run statistics decide, event tests only support; hold-only
// locks are judged on holds; every verdict carries its own test and p-value.
using namespace lockscope;
using namespace lockscope::reports;
using test::makeLock;
using test::makeStack;
using test::findLock;

namespace {
const MetricDelta& figure(const LockDelta& l, const std::string& name)
{
    auto it = std::find_if(l.runs.begin(), l.runs.end(), [&](const MetricDelta& m) { return m.name == name; });
    if (it == l.runs.end())
        throw std::runtime_error("no figure " + name);
    return *it;
}

Lock holdLock(const std::string& key, uint32_t stack, uint64_t n, uint64_t hold_ns, uint64_t seed)
{
    Lock l = makeLock(key, stack, n, hold_ns, seed);
    l.hold = l.wait;
    l.wait = Log2Hist{};
    l.sites[0].hold = l.sites[0].wait;
    l.sites[0].wait = Log2Hist{};
    return l;
}

// One run: "busy" has waits (n waits of wait_ns), "quiet" only holds.
Capture run(const std::string& label, uint64_t waits, uint64_t wait_ns, uint64_t holds, uint64_t hold_ns,
            uint64_t seed)
{
    Capture c;
    c.meta.label = label;
    c.meta.kernel_release = "6.18.0";
    c.meta.duration_s = 10;
    c.stats.events = waits + holds;
    c.stacks.push_back(makeStack(1, {"_raw_spin_lock", "sem_lock", "do_semtimedop"}, seed * 16));
    c.locks.push_back(makeLock("spinlock@busy", 1, waits, wait_ns, seed));
    c.locks.push_back(holdLock("spinlock@quiet", 1, holds, hold_ns, seed + 1000));
    return c;
}

std::vector<Capture> runs(const std::string& label, std::initializer_list<uint64_t> waits, uint64_t wait_ns,
                          uint64_t seed)
{
    std::vector<Capture> v;
    for (uint64_t n : waits)
        v.push_back(run(label, n, wait_ns, 20000, 3000, seed++));
    return v;
}
} // namespace

TEST(CompareSets, RunStatisticsGiveTheVerdictWithTheirOwnTestAndP)
{
    const auto base = runs("base", {20000, 20600, 19500}, 2000, 1);
    const auto patched = runs("patched", {30000, 31000, 29500}, 2000, 11);
    const Comparison c = compareSets(base, patched);
    EXPECT_EQ(c.runs_before, 3u);
    EXPECT_TRUE(c.varianceKnown());
    const LockDelta& busy = findLock(c, "spinlock@busy");
    EXPECT_EQ(busy.judgement.verdict, Verdict::Regressed);
    EXPECT_EQ(busy.judgement.test, TestKind::WelchRuns);
    EXPECT_EQ(busy.judgement.basis, "total wait/s");
    const MetricDelta& m = figure(busy, "total wait/s");
    ASSERT_TRUE(m.runs_test);
    ASSERT_TRUE(busy.judgement.p_value);
    EXPECT_DOUBLE_EQ(*busy.judgement.p_value, m.runs_test->p_value);
    EXPECT_TRUE(m.runs_test->ranges_separate);
    EXPECT_EQ(m.before_runs.n, 3u);
    EXPECT_GT(m.before_runs.stddev, 0.0);
    EXPECT_EQ(m.judgement, busy.judgement) << "the judged figure's row carries the lock's verdict";
    // Per-run means: the pooled totals divided by the runs.
    EXPECT_DOUBLE_EQ(busy.contentions.before, (20000.0 + 20600.0 + 19500.0) / 3.0);
}

TEST(CompareSets, EventTestsAloneNeverDecideWhenRunsExist)
{
    // Run-to-run noise larger than the change: overlapping ranges. The pooled
    // event test sees 60000 events a side and calls the 3% shift significant.
    const auto base = runs("base", {20000, 23000, 17000}, 2000, 1);
    const auto patched = runs("patched", {24000, 17500, 20500}, 2000, 21);
    const Comparison c = compareSets(base, patched);
    const LockDelta& busy = findLock(c, "spinlock@busy");
    EXPECT_EQ(busy.judgement.test, TestKind::WelchRuns);
    EXPECT_EQ(busy.judgement.verdict, Verdict::NoSignificantChange);
    EXPECT_FALSE(figure(busy, "total wait/s").runs_test->ranges_separate);
}

TEST(CompareSets, OneRunPerSideSaysVarianceIsUnknown)
{
    const auto base = runs("base", {20000}, 2000, 1);
    const auto patched = runs("patched", {30000}, 2000, 11);
    const Comparison c = compareSets(base, patched);
    EXPECT_FALSE(c.varianceKnown());
    EXPECT_NE(varianceNote(c).find("run-to-run variance is unknown"), std::string::npos);
    const LockDelta& busy = findLock(c, "spinlock@busy");
    EXPECT_EQ(busy.judgement.test, TestKind::EventHistograms);
    EXPECT_DOUBLE_EQ(*busy.judgement.p_value, busy.wait_test.p_value);
    EXPECT_NE(busy.judgement.reason.str().find("variance unknown"), std::string::npos);
    for (const auto& m : busy.runs)
        EXPECT_FALSE(m.runs_test) << m.name;
    // compare() is the n = 1 case of the same model.
    EXPECT_EQ(compare(base[0], patched[0]), c);
}

TEST(CompareSets, HoldOnlyLockIsJudgedOnHoldsWithTheHoldTest)
{
    auto base = runs("base", {20000}, 2000, 1);
    auto patched = runs("patched", {20000}, 2000, 1);
    patched[0].locks[1] = holdLock("spinlock@quiet", 1, 20000, 9000, 77);  // 3x longer holds
    const Comparison c = compareSets(base, patched);
    const LockDelta& quiet = findLock(c, "spinlock@quiet");
    EXPECT_FALSE(quiet.has_wait);
    EXPECT_TRUE(quiet.has_hold);
    EXPECT_EQ(quiet.judgement.basis, "total hold/s");
    EXPECT_EQ(quiet.judgement.verdict, Verdict::NoVerdict) << "one run a side";
    EXPECT_TRUE(quiet.hold_test.significant);
    ASSERT_TRUE(quiet.judgement.p_value);
    EXPECT_DOUBLE_EQ(*quiet.judgement.p_value, quiet.hold_test.p_value);
    for (const auto& m : quiet.runs)
        EXPECT_EQ(m.name.str().find("wait"), std::string::npos)
            << "no wait figures on a hold-only lock: " << m.name;
    // Sorted by hold, the hold-only lock comes first; the headline has hold figures.
    CompareOptions o;
    o.sort = CompareSort::Hold;
    EXPECT_EQ(compareSets(base, patched, o).locks.front().key, "spinlock@quiet");
    EXPECT_NE(std::find_if(c.headline.begin(), c.headline.end(),
                           [](const MetricDelta& m) { return m.name == "total hold/s"; }),
              c.headline.end());
}

TEST(CompareSets, NoWaitsAnywhereMeansNoWaitFiguresOrZeroRows)
{
    auto base = runs("base", {20000}, 2000, 1);
    auto patched = runs("patched", {20000}, 2000, 1);
    for (auto* side : {&base, &patched})
        (*side)[0].locks.erase((*side)[0].locks.begin());  // only the hold-only lock is left
    const Comparison c = compareSets(base, patched);
    for (const auto& m : c.headline)
        EXPECT_EQ(m.name.str().find("wait"), std::string::npos) << m.name;
    for (Format f : {Format::Text, Format::Markdown, Format::Html}) {
        const std::string out = render(c, f);
        EXPECT_EQ(out.find("total wait/s"), std::string::npos) << toString(f);
        EXPECT_NE(out.find("total hold/s"), std::string::npos) << toString(f);
        EXPECT_EQ(out.find("0 ns/s | 0 ns/s"), std::string::npos) << toString(f);
    }
}

TEST(CompareSets, VerdictWithheldWhenTheSidesLostDifferentShares)
{
    auto base = runs("base", {20000, 20600, 19500}, 2000, 1);
    auto patched = runs("patched", {30000, 31000, 29500}, 2000, 11);
    for (auto& r : patched)
        r.stats.lost = r.stats.events / 4;  // 20% of the patched side's events lost
    const Comparison c = compareSets(base, patched);
    const LockDelta& busy = findLock(c, "spinlock@busy");
    EXPECT_EQ(busy.judgement.verdict, Verdict::Withheld);
    EXPECT_EQ(busy.judgement.test, TestKind::WelchRuns) << "the test that ran is still named";
    EXPECT_NE(busy.judgement.reason.str().find("events lost"), std::string::npos) << busy.judgement.reason;
    EXPECT_NE(c.warnings.front().find("of events lost"), std::string::npos) << c.warnings.front();
}


// Stack failures are a share of the lock events, which walk stacks: a run's
// syscall and CPU-sample events (here 100 times the lock events) must not
// thin a 20% loss of call paths out to 0.2%.
TEST(CompareSets, VerdictWithheldWhenOneSideLostTheStacksOfItsLockEvents)
{
    auto base = runs("base", {20000, 20600, 19500}, 2000, 1);
    auto patched = runs("patched", {30000, 31000, 29500}, 2000, 11);
    for (auto* side : {&base, &patched})
        for (auto& r : *side)
            r.stats.events *= 100;
    for (auto& r : patched)
        r.stats.stack_failures = (r.locks[0].wait.count() + r.locks[1].hold.count()) / 5;
    const Comparison c = compareSets(base, patched);
    EXPECT_DOUBLE_EQ(c.quality_after.stackFailurePct(), 20.0);
    const LockDelta& busy = findLock(c, "spinlock@busy");
    EXPECT_EQ(busy.judgement.verdict, Verdict::Withheld);
    EXPECT_NE(busy.judgement.reason.str().find("stack captures failed: 0.00% before, 20.00% after"),
        std::string::npos)
        << busy.judgement.reason;
    const auto line = std::find_if(c.warnings.begin(), c.warnings.end(),
        [](const std::string& w) { return w.find("stack captures failed (20.00% of 150500 lock events)") != std::string::npos; });
    EXPECT_NE(line, c.warnings.end()) << c.warnings.front();
}
TEST(CompareSets, IdenticalProbeSkipsAreOneLinePerCause)
{
    auto base = runs("base", {20000}, 2000, 1);
    auto patched = runs("patched", {20000}, 2000, 2);
    for (auto* side : {&base, &patched})
        for (const char* name : {"hold:fentry", "function:ipc_lock", "function:sem_lock"})
            (*side)[0].probes.push_back(ProbeStatus{name, "", "fentry", false, "fentry refused (EPERM)"});
    patched[0].probes.push_back(ProbeStatus{"cpu_sampling", "", "perf_event", false, "disabled"});
    const Comparison c = compareSets(base, patched);
    const auto count = std::count_if(c.warnings.begin(), c.warnings.end(), [](const std::string& w) {
        return w.find("fentry refused") != std::string::npos;
    });
    EXPECT_EQ(count, 1);
    EXPECT_NE(std::find(c.warnings.begin(), c.warnings.end(),
                        "3 probes not attached on either side: fentry refused (EPERM) "
                        "(function:ipc_lock, function:sem_lock, hold:fentry)"),
              c.warnings.end());
    EXPECT_NE(std::find(c.warnings.begin(), c.warnings.end(), "1 probe not attached after: disabled (cpu_sampling)"),
              c.warnings.end());
}

// Off on both sides as asked (record's defaults): no line; off on one side
// only: its figures are missing there, which a comparison must say.
TEST(CompareSets, ProbesOffByChoiceOnBothSidesAreNotWarnedOf)
{
    auto base = runs("base", {20000}, 2000, 1);
    auto patched = runs("patched", {20000}, 2000, 2);
    for (auto* side : {&base, &patched}) {
        (*side)[0].probes.push_back(ProbeStatus{"spin_hold", "", "", false, offUnlessAskedFor("--hold")});
        (*side)[0].probes.push_back(ProbeStatus{"user_locks", "", "", false, kProbeDisabled});
    }
    base[0].probes.push_back(ProbeStatus{"syscalls", "", "fentry", true, ""});
    patched[0].probes.push_back(ProbeStatus{"syscalls", "", "", false, offUnlessAskedFor("--syscalls")});
    const Comparison c = compareSets(base, patched);
    std::string all;
    for (const auto& w : c.warnings)
        all += w + "\n";
    EXPECT_EQ(all.find("spin_hold"), std::string::npos) << all;
    EXPECT_EQ(all.find("user_locks"), std::string::npos) << all;
    EXPECT_NE(all.find("probe syscalls attached only before: its figures are missing on the other side"),
              std::string::npos) << all;
}

TEST(CompareSets, PercentagesChangeInPoints)
{
    std::vector<Capture> base, patched;
    for (uint64_t r = 0; r < 3; ++r) {
        Capture b = run("base", 1000, 2000, 1000, 2000, r + 1), a = run("patched", 1000, 2000, 1000, 2000, r + 5);
        b.cpu.samples = a.cpu.samples = 1000;
        b.cpu.lock_samples = 300 + r;
        a.cpu.lock_samples = 200 + r;
        base.push_back(b);
        patched.push_back(a);
    }
    const Comparison c = compareSets(base, patched);
    const std::string md = render(c, Format::Markdown);
    EXPECT_NE(md.find("| CPU in lock functions | 30.10% ±0.3% | 20.10% ±0.5% | -10.00 pp | **improved** (Welch t"),
              std::string::npos)
        << md;
}

TEST(CompareSets, MarkdownIsTheBlockAMaintainerPastes)
{
    auto base = runs("base", {20000, 20600, 19500}, 2000, 1);
    auto patched = runs("patched", {30000, 31000, 29500}, 2000, 11);
    patched[0].stats.lost = 5;
    const Comparison c = compareSets(base, patched);
    const std::string md = render(c, Format::Markdown);
    EXPECT_NE(md.find("n = 3 runs before, 3 after"), std::string::npos) << md;
    EXPECT_NE(md.find("| `spinlock@busy` | total wait/s |"), std::string::npos) << md;
    EXPECT_EQ(md.find("> **Warning:**"), std::string::npos) << "warnings only with --verbose";
    EXPECT_EQ(md.find("Method:"), std::string::npos);
    RenderExtras verbose;
    verbose.verbose = true;
    const std::string all = render(c, Format::Markdown, verbose);
    EXPECT_NE(all.find("> **Warning:** after (3 runs), of"), std::string::npos) << all;
    EXPECT_NE(all.find("Method: Welch's t-test"), std::string::npos);
}

TEST(CompareSets, EmptySetIsAnError)
{
    EXPECT_THROW(compareSets(std::vector<Capture>{}, runs("p", {10}, 1, 1)), std::invalid_argument);
}

namespace {
// A lock with waits and holds: n waits of wait_ns, h holds of hold_ns.
Lock bothLock(const std::string& key, uint64_t n, uint64_t wait_ns, uint64_t h, uint64_t hold_ns, uint64_t seed)
{
    Lock l = makeLock(key, 1, n, wait_ns, seed);
    const Lock holds = holdLock(key, 1, h, hold_ns, seed + 500);
    l.hold = holds.hold;
    l.sites[0].hold = holds.sites[0].hold;
    return l;
}

Capture bothRun(const std::string& label, uint64_t waits, uint64_t holds, uint64_t hold_ns, uint64_t seed,
                std::optional<double> ops = std::nullopt)
{
    Capture c;
    c.meta.label = label;
    c.meta.kernel_release = "6.18.0";
    c.meta.duration_s = 10;
    c.stats.events = waits + holds;
    c.stacks.push_back(makeStack(1, {"_raw_spin_lock", "timer_lookup", "do_timer_gettime"}, seed * 16));
    c.locks.push_back(bothLock("spinlock@both", waits, 2000, holds, hold_ns, seed));
    if (ops)
        c.workload.results = {{"ops", *ops}, {"ops_per_sec", *ops / 10.0}};
    return c;
}
} // namespace

TEST(CompareSets, EachLockIsJudgedOnWaitsAndHoldsAndTheStrongerLeads)
{
    // The same waits (20000 x 2 us a run) on both sides; the holds take 3x longer after.
    std::vector<Capture> base, patched;
    for (uint64_t r = 0; r < 3; ++r) {
        base.push_back(bothRun("base", 20000 + 300 * r, 50000, 3000, r + 1));
        patched.push_back(bothRun("patched", 20000 + 300 * r, 50000, 9000, r + 11));
    }
    const Comparison c = compareSets(base, patched);
    const LockDelta& l = findLock(c, "spinlock@both");
    EXPECT_EQ(l.judgement.basis, "total hold/s") << "the row names the figure its verdict rests on";
    EXPECT_EQ(l.judgement.verdict, Verdict::Regressed);
    EXPECT_EQ(l.judgement.test, TestKind::WelchRuns);
    EXPECT_EQ(figure(l, "total wait/s").judgement.verdict, Verdict::NoSignificantChange);
    EXPECT_EQ(figure(l, "total hold/s").judgement, l.judgement);
    // Means and percentiles are judged on their rows but are not listed as the lock's other changes.
    EXPECT_EQ(figure(l, "mean hold").judgement.verdict, Verdict::Regressed);
    EXPECT_TRUE(otherChangedFigures(l).empty());
    const std::string md = render(c, Format::Markdown);
    EXPECT_NE(md.find("| `spinlock@both` | total hold/s |"), std::string::npos) << md;
    EXPECT_NE(render(c, Format::Text).find("spinlock@both total hold/s"), std::string::npos);
    EXPECT_NE(render(c, Format::Html).find("<td>total hold/s</td>"), std::string::npos);
    EXPECT_NE(render(c, Format::Json).find("\"basis\": \"total hold/s\""), std::string::npos);
}

TEST(CompareSets, PerOperationLeadsWhenThroughputChanged)
{
    // One hold per operation. After: 40% fewer operations, each hold 40% longer: per second the
    // lock looks 16% lighter, per operation it costs 40% more.
    std::vector<Capture> base, patched;
    for (uint64_t r = 0; r < 3; ++r) {
        const double opsB = 100000 + 2000 * double(r), opsA = 60000 + 1500 * double(r);
        base.push_back(bothRun("base", 0, uint64_t(opsB), 1000, r + 1, opsB));
        patched.push_back(bothRun("patched", 0, uint64_t(opsA), 1400, r + 21, opsA));
    }
    const Comparison c = compareSets(base, patched);
    EXPECT_TRUE(c.per_op);
    EXPECT_TRUE(c.per_op_leads);
    EXPECT_NEAR(*c.ops_per_s.pct(), -39.9, 0.5);
    const LockDelta& l = findLock(c, "spinlock@both");
    EXPECT_EQ(l.judgement.basis, "hold time/op");
    EXPECT_EQ(l.judgement.verdict, Verdict::Regressed);
    EXPECT_NEAR(*figure(l, "hold time/op").value.pct(), 40.0, 5.0);
    EXPECT_LT(*figure(l, "total hold/s").value.pct(), -10.0);
    EXPECT_NEAR(figure(l, "holds/op").value.after, 1.0, 1e-9);
    EXPECT_NE(varianceNote(c).find("judged per operation"), std::string::npos) << varianceNote(c);
    const std::string md = render(c, Format::Markdown);
    EXPECT_NE(md.find("| `spinlock@both` | hold time/op |"), std::string::npos) << md;
    // The other changed figures follow the lead as rows of their own.
    const auto others = otherChangedFigures(l);
    ASSERT_FALSE(others.empty());
    EXPECT_NE(md.find("| `spinlock@both` | " + others.front()->name.str() + " |"), std::string::npos) << md;
}

TEST(CompareSets, PerOperationFiguresFollowWhenThroughputHeld)
{
    std::vector<Capture> base, patched;
    for (uint64_t r = 0; r < 3; ++r) {
        const double ops = 100000 + 2000 * double(r);
        base.push_back(bothRun("base", 0, uint64_t(ops), 1000, r + 1, ops));
        patched.push_back(bothRun("patched", 0, uint64_t(ops), 3000, r + 21, ops));
    }
    const Comparison c = compareSets(base, patched);
    EXPECT_TRUE(c.per_op);
    EXPECT_FALSE(c.per_op_leads);
    const LockDelta& l = findLock(c, "spinlock@both");
    EXPECT_EQ(l.judgement.basis, "total hold/s");
    EXPECT_EQ(figure(l, "hold time/op").judgement.verdict, Verdict::Regressed);
}

TEST(CompareSets, ALockSeenOnOneSideIsJudgedByTheRateTest)
{
    std::vector<Capture> base, patched;
    for (uint64_t r = 0; r < 3; ++r) {
        base.push_back(run("base", 20000 + 100 * r, 2000, 20000, 3000, r + 1));
        Capture a = run("patched", 20000 + 100 * r, 2000, 20000, 3000, r + 11);
        a.locks.push_back(bothLock("spinlock@new", 3000 + 100 * r, 5000, 30000, 4000, r + 31));
        patched.push_back(a);
    }
    const Comparison c = compareSets(base, patched);
    const LockDelta& l = findLock(c, "spinlock@new");
    EXPECT_EQ(l.presence, Presence::OnlyAfter);
    EXPECT_EQ(l.judgement.verdict, Verdict::Regressed);
    EXPECT_EQ(l.judgement.test, TestKind::QuasiPoissonRuns);
    EXPECT_DOUBLE_EQ(judgedMetric(l)->value.before, 0.0);
    EXPECT_NE(render(c, Format::Markdown).find("| `spinlock@new` | " + l.judgement.basis.str() + " | 0 ns/s"),
        std::string::npos);
}

// "Top changed locks" and the GUI's table: a lock with too few events to
// judge is no news, and goes after the hot lock whose change was not
// significant (before, a lock of three waits led both).
TEST(CompareSets, TooFewEventsRankWithNoSignificantChange)
{
    auto base = runs("base", {20000, 26000, 17000}, 2000, 1);
    auto patched = runs("patched", {23000, 18000, 27000}, 2000, 11);
    for (auto* side : {&base, &patched})
        for (auto& r : *side)
            r.locks.push_back(makeLock("spinlock@rare", 1, 2, 40000, 7));
    const Comparison c = compareSets(base, patched);
    ASSERT_EQ(findLock(c, "spinlock@rare").judgement.verdict, Verdict::InsufficientData);
    ASSERT_EQ(findLock(c, "spinlock@busy").judgement.verdict, Verdict::NoSignificantChange);
    std::vector<std::string> order;
    for (size_t i : changedFirstOrder(c))
        order.push_back(c.locks[i].key);
    EXPECT_LT(std::find(order.begin(), order.end(), "spinlock@busy"),
              std::find(order.begin(), order.end(), "spinlock@rare"));
    const std::string md = render(c, Format::Markdown);
    EXPECT_LT(md.find("`spinlock@busy`"), md.find("`spinlock@rare`")) << md;
}
