// SPDX-License-Identifier: GPL-2.0-or-later
#include <gtest/gtest.h>

#include <algorithm>

#include "lockscope/reports/change_order.h"
#include "lockscope/reports/compare.h"
#include "format_runs.h"
#include "test_support.h"

using namespace lockscope;
using namespace lockscope::reports;
using test::makeLock;
using test::makeStack;
using test::findLock;

namespace {
// Known answers: "hot" 10x better, "steady" unchanged with noise, "gone" only
// before, "fresh" only after. Addresses and offsets differ between the two
// "kernel builds", as they do for real.
std::pair<Capture, Capture> knownPair(uint64_t run = 0)
{
    Capture b, a;
    b.meta.label = "baseline";
    a.meta.label = "patched";
    b.meta.kernel_release = "6.18.0-base";
    a.meta.kernel_release = "6.18.0-fix";
    b.meta.duration_s = a.meta.duration_s = 10;
    b.stacks.push_back(makeStack(1, {"queued_spin_lock_slowpath", "_raw_spin_lock", "sem_lock", "do_semtimedop"}, 0));
    a.stacks.push_back(makeStack(7, {"queued_spin_lock_slowpath", "_raw_spin_lock", "sem_lock", "do_semtimedop"}, 0x400));
    b.locks.push_back(makeLock("spinlock@hot", 1, 20000, 16000, 1 + 10 * run));
    a.locks.push_back(makeLock("spinlock@hot", 7, 20000, 1600, 2 + 10 * run));
    b.locks.back().address = 0xffff888000001000;
    a.locks.back().address = 0xffff888000009000;
    b.locks.push_back(makeLock("spinlock@steady", 1, 5000, 4000, 3 + 10 * run));
    a.locks.push_back(makeLock("spinlock@steady", 7, 5040, 4000, 4 + 10 * run));  // same distribution, other draws
    b.locks.push_back(makeLock("spinlock@gone", 1, 300, 2000, 5 + 10 * run));
    a.locks.push_back(makeLock("spinlock@fresh", 7, 300, 2000, 6 + 10 * run));
    return {b, a};
}

// Three runs a side of knownPair, each with its own draws.
std::pair<std::vector<Capture>, std::vector<Capture>> knownRuns()
{
    std::vector<Capture> bs, as;
    for (uint64_t run = 0; run < 3; ++run) {
        auto [b, a] = knownPair(run);
        bs.push_back(std::move(b));
        as.push_back(std::move(a));
    }
    return {bs, as};
}
} // namespace

TEST(Compare, TenTimesBetterIsASignificantImprovement)
{
    auto [bs, as] = knownRuns();
    const Comparison c = compareSets(bs, as);
    const LockDelta& hot = findLock(c, "spinlock@hot");
    EXPECT_EQ(hot.presence, Presence::Both);
    EXPECT_EQ(hot.judgement.verdict, Verdict::Improved);
    EXPECT_EQ(hot.judgement.test, TestKind::WelchRuns);
    ASSERT_TRUE(hot.total_wait_ns.pct());
    EXPECT_NEAR(*hot.total_wait_ns.pct(), -90.0, 3.0);
}

TEST(Compare, OneRunASideSeesTheChangeButGivesNoVerdict)
{
    // The event test on one run a side finds the 10x change, and it finds
    // run-to-run noise just as readily (CompareReal.OneRunASideIsNeverAVerdict).
    auto [b, a] = knownPair();
    const Comparison c = compare(b, a);
    const LockDelta& hot = findLock(c, "spinlock@hot");
    EXPECT_TRUE(hot.wait_test.significant);
    EXPECT_LT(hot.wait_test.p_value, 1e-6);
    EXPECT_EQ(hot.judgement.verdict, Verdict::NoVerdict);
    EXPECT_EQ(hot.judgement.test, TestKind::EventHistograms);
    EXPECT_NE(hot.judgement.reason.str().find("two or more runs a side"), std::string::npos)
        << hot.judgement.reason;
    for (const auto& m : c.headline)
        EXPECT_FALSE(m.judgement.decided()) << m.name;
    // Shown first all the same: what the event test sees, and the locks on
    // one side only, by the size of the change.
    const std::vector<size_t> order = changedFirstOrder(c);
    EXPECT_EQ(c.locks[order[0]].key, "spinlock@hot");
    EXPECT_EQ(c.locks[order[3]].key, "spinlock@steady");
}

TEST(Compare, OneRunAgainstThreeIsJudgedOnTheOtherSidesSpread)
{
    auto [bs, as] = knownRuns();
    for (const bool singleAfter : {true, false}) {
        const Comparison c = singleAfter ? compareSets(bs, std::vector<Capture>{as[0]})
                                         : compareSets(std::vector<Capture>{bs[0]}, as);
        const LockDelta& hot = findLock(c, "spinlock@hot");
        EXPECT_EQ(hot.judgement.verdict, Verdict::Improved) << singleAfter;
        EXPECT_EQ(hot.judgement.test, TestKind::OneRunAgainstRuns);
        EXPECT_EQ(findLock(c, "spinlock@steady").judgement.verdict, Verdict::NoSignificantChange);
        // In every run of one side and none of the other: the rate test on the runs' dispersion judges it
        // (under the absolute floor here: 60 us/s of waits)...
        const LockDelta& onThree = findLock(c, singleAfter ? "spinlock@gone" : "spinlock@fresh");
        EXPECT_EQ(onThree.judgement.test, TestKind::QuasiPoissonRuns);
        EXPECT_LT(onThree.judgement.p_value.value_or(1.0), 0.01);
        EXPECT_TRUE(onThree.judgement.below_floor);
        // ...but in the one run only, nothing says whether the lock just comes and goes between runs.
        const LockDelta& inOne = findLock(c, singleAfter ? "spinlock@fresh" : "spinlock@gone");
        EXPECT_EQ(inOne.judgement.verdict, singleAfter ? Verdict::OnlyAfter : Verdict::OnlyBefore);
        EXPECT_EQ(inOne.judgement.test, TestKind::None);
        EXPECT_NE(inOne.judgement.reason.str().find("in the one run only"), std::string::npos)
            << inOne.judgement.reason;
        EXPECT_NE(varianceNote(c).find("side of one run"), std::string::npos) << varianceNote(c);
    }
}

TEST(Compare, OneRunAgainstTwoGivesNoVerdict)
{
    auto [bs, as] = knownRuns();
    const Comparison c = compareSets(std::vector<Capture>{bs[0], bs[1]}, std::vector<Capture>{as[0]});
    EXPECT_FALSE(c.varianceKnown());
    const LockDelta& hot = findLock(c, "spinlock@hot");
    EXPECT_EQ(hot.judgement.verdict, Verdict::NoVerdict);
    for (const auto& m : hot.runs)
        EXPECT_FALSE(m.judgement.decided()) << m.name;
    const MetricDelta* mean = lockFigure(hot, "mean wait");
    ASSERT_NE(mean, nullptr);
    EXPECT_NE(mean->judgement.reason.str().find("one degree of freedom"), std::string::npos)
        << mean->judgement.reason;
}

TEST(Compare, UnchangedWithNoiseIsNotSignificant)
{
    auto [b, a] = knownPair();
    const Comparison c = compare(b, a); // find() returns a reference into it
    const LockDelta& steady = findLock(c, "spinlock@steady");
    EXPECT_EQ(steady.judgement.verdict, Verdict::NoSignificantChange);
    EXPECT_FALSE(steady.wait_test.significant);
    EXPECT_GT(steady.wait_test.p_value, 0.01);
}

TEST(Compare, LocksOnOneSideOnly)
{
    auto [b, a] = knownPair();
    const Comparison c = compare(b, a);
    EXPECT_EQ(findLock(c, "spinlock@gone").judgement.verdict, Verdict::OnlyBefore);
    EXPECT_EQ(findLock(c, "spinlock@gone").contentions.after, 0.0);
    EXPECT_EQ(findLock(c, "spinlock@fresh").judgement.verdict, Verdict::OnlyAfter);
    EXPECT_FALSE(findLock(c, "spinlock@fresh").total_wait_ns.pct());
    EXPECT_EQ(c.locks.size(), 4u);
}

TEST(Compare, MatchesByKeyAndFramesWithoutOffsets)
{
    auto [b, a] = knownPair();
    const Comparison c = compare(b, a);
    // One path, matched across builds even though stack ids, offsets and addresses differ.
    const LockDelta& hot = findLock(c, "spinlock@hot");
    ASSERT_EQ(hot.paths.size(), 1u);
    EXPECT_GT(hot.paths[0].wait_ns.before, 0.0);
    EXPECT_GT(hot.paths[0].wait_ns.after, 0.0);
    EXPECT_EQ(hot.paths[0].frames.front(), "do_semtimedop");
    // The diff tree has a single chain of 4 frames + root.
    EXPECT_EQ(c.tree.nodes.size(), 5u);
    EXPECT_EQ(c.tree.nodes[0].before_wait_ns, uint64_t(b.locks[0].wait.total() + b.locks[1].wait.total() +
                                                         b.locks[2].wait.total()));
    for (uint32_t id = 0; id + 1 < 5; ++id) {
        ASSERT_EQ(c.tree.children(id).size(), 1u) << "node " << id;
        EXPECT_EQ(c.tree.nodes[c.tree.children(id)[0]].parent, id);
    }
    EXPECT_TRUE(c.tree.children(4).empty());
}

// Each node's children are the nodes whose parent it is, in the order they
// were added, wherever they lie in the array.
TEST(DiffTree, ChildrenAreLaidOutFromTheParentsInTheOrderAdded)
{
    DiffTree t;
    for (uint32_t parent : {0u, 0u, 1u, 0u, 2u, 1u, 3u}) { // nodes 1..7 after the root
        DiffNode n;
        n.parent = parent;
        t.nodes.push_back(n);
    }
    t.nodes.insert(t.nodes.begin(), DiffNode{});
    t.linkChildren();
    auto kids = [&t](uint32_t id) { return std::vector<uint32_t>(t.children(id).begin(), t.children(id).end()); };
    EXPECT_EQ(kids(0), (std::vector<uint32_t>{1, 2, 4}));
    EXPECT_EQ(kids(1), (std::vector<uint32_t>{3, 6}));
    EXPECT_EQ(kids(2), (std::vector<uint32_t>{5}));
    EXPECT_EQ(kids(3), (std::vector<uint32_t>{7}));
    for (uint32_t leaf : {4u, 5u, 6u, 7u})
        EXPECT_TRUE(kids(leaf).empty()) << leaf;
    DiffTree root;
    root.nodes.emplace_back();
    root.linkChildren();
    EXPECT_TRUE(root.children(0).empty());
}

// The sides' trees merge by frame under each parent: a root with more
// children than a scan looks through (12 callers before, 12 after, 9 of
// them shared), and a shared node that gains a child after. Before's nodes
// come first, numbered as its walk meets them; the after side's new ones follow.
TEST(DiffTree, TheSidesMergeByFrameUnderEachParent)
{
    Capture b, a;
    b.meta.duration_s = a.meta.duration_s = 1;
    auto add = [](Capture& c, uint32_t id, const char* inner, const std::string& caller, uint64_t n) {
        c.stacks.push_back(makeStack(id, { inner, caller.c_str() }));
        c.locks.push_back(makeLock("spinlock@" + caller + "/" + inner, id, n, 1000));
    };
    std::vector<std::string> callers;
    for (int i = 0; i < 15; ++i)
        callers.push_back("caller_" + std::to_string(i));
    for (uint32_t i = 0; i < 12; ++i)
        add(b, i + 1, "lock_fn", callers[i], 10 + i);
    for (uint32_t i = 3; i < 15; ++i)
        add(a, i + 1, "lock_fn", callers[i], 100 + i);
    add(a, 99, "other_fn", callers[5], 7);
    const Comparison c = compare(b, a);
    const DiffTree& t = c.tree;
    ASSERT_EQ(t.nodes.size(), 1u + 12 * 2 + 3 * 2 + 1);
    auto child = [&t](uint32_t id, const std::string& fn) {
        uint32_t found = 0;
        int seen = 0;
        for (uint32_t k : t.children(id))
            if (std::string(t.function(k)) == fn) {
                found = k;
                ++seen;
            }
        EXPECT_EQ(seen, 1) << fn << " under node " << id;
        return found;
    };
    for (uint32_t i = 0; i < 15; ++i) {
        const uint32_t caller = child(0, callers[i]);
        const uint32_t lockFn = child(caller, "lock_fn");
        EXPECT_EQ(t.nodes[lockFn].before_count, i < 12 ? 10 + i : 0) << callers[i];
        EXPECT_EQ(t.nodes[lockFn].after_count, i >= 3 ? 100 + i : 0) << callers[i];
        EXPECT_EQ(caller <= 24, i < 12) << callers[i] << " is node " << caller;
    }
    const uint32_t five = child(0, callers[5]);
    const uint32_t other = child(five, "other_fn");
    EXPECT_GT(other, 24u);
    EXPECT_EQ(t.nodes[other].after_count, 7u);
    EXPECT_EQ(t.nodes[five].after_count, 105u + 7);
    EXPECT_EQ(t.nodes[0].before_count, 10u * 12 + 66);
}

TEST(Compare, ThresholdHidesSmallChangesOnly)
{
    auto [b, a] = knownPair();
    CompareOptions o;
    o.threshold_pct = 20;
    const Comparison c = compare(b, a, o);
    EXPECT_TRUE(findLock(c, "spinlock@steady").hidden);
    EXPECT_FALSE(findLock(c, "spinlock@hot").hidden);
    EXPECT_FALSE(findLock(c, "spinlock@fresh").hidden);
}

TEST(Compare, FailIfWorseGate)
{
    auto [bs, as] = knownRuns();
    EXPECT_TRUE(regressionsBeyond(compareSets(bs, as), 10).empty()) << "an improvement must pass the gate";
    // Swapped, the 10x improvement is a 10x regression.
    const auto bad = regressionsBeyond(compareSets(as, bs), 10);
    ASSERT_FALSE(bad.empty());
    EXPECT_NE(std::find_if(bad.begin(), bad.end(),
                           [](const std::string& s) { return s.find("spinlock@hot") != std::string::npos; }),
              bad.end());
    EXPECT_TRUE(regressionsBeyond(compareSets(as, bs), 1e6).empty()) << "a huge threshold passes";
}

TEST(Compare, WorkloadAndCpuFigures)
{
    // Three runs per side with run-to-run noise: workload figures get run-based verdicts.
    std::vector<Capture> bs, as;
    for (int run = 0; run < 3; ++run) {
        auto [b, a] = knownPair();
        b.workload.results = {{"ops_per_sec", 1000.0 + run * 10}, {"threads", 8}, {"latency_ns", 500 - run * 5}};
        a.workload.results = {{"ops_per_sec", 2500.0 - run * 20}, {"threads", 8}, {"latency_ns", 800 + run * 3},
                              {"only_after", 1}};
        b.cpu.samples = a.cpu.samples = 10000;
        b.cpu.lock_samples = 5000 + uint64_t(run) * 50;
        a.cpu.lock_samples = 500 + uint64_t(run) * 20;
        b.cpu.top_leaves = {{"queued_spin_lock_slowpath", "", 4500 + uint64_t(run) * 40}};
        a.cpu.top_leaves = {{"queued_spin_lock_slowpath", "", 400 + uint64_t(run) * 10}};
        bs.push_back(b);
        as.push_back(a);
    }
    const Comparison c = compareSets(bs, as);
    ASSERT_EQ(c.workload.size(), 3u);
    auto metric = [&](const std::vector<MetricDelta>& v, const std::string& n) {
        auto it = std::find_if(v.begin(), v.end(), [&](const MetricDelta& m) { return m.name == n; });
        if (it == v.end()) {
            ADD_FAILURE() << "no metric " << n;
            return MetricDelta{};
        }
        return *it;
    };
    EXPECT_EQ(metric(c.workload, "ops_per_sec").judgement.verdict, Verdict::Improved);
    EXPECT_EQ(metric(c.workload, "ops_per_sec").judgement.test, TestKind::WelchRuns);
    EXPECT_EQ(metric(c.workload, "latency_ns").judgement.verdict, Verdict::Regressed);
    EXPECT_EQ(metric(c.workload, "threads").judgement.verdict, Verdict::NoSignificantChange);
    const MetricDelta share = metric(c.headline, "cpu_lock_share");
    EXPECT_DOUBLE_EQ(share.value.before, 50.5);
    EXPECT_DOUBLE_EQ(share.value.after, 5.2);
    EXPECT_EQ(share.judgement.verdict, Verdict::Improved);
    EXPECT_EQ(metric(c.cpu_leaves, "queued_spin_lock_slowpath").judgement.verdict, Verdict::Improved);
    EXPECT_EQ(std::count_if(c.headline.begin(), c.headline.end(),
                            [](const MetricDelta& m) { return m.name == "cpu_bpf_share"; }),
              0)
        << "no side saw BPF on its stacks";
    EXPECT_FALSE(regressionsBeyond(c, 10).empty()) << "latency_ns got 60% worse";

    // One run per side: the variance is unknown, so a workload figure gets no verdict at all.
    const Comparison one = compare(bs[0], as[0]);
    EXPECT_EQ(metric(one.workload, "ops_per_sec").judgement.verdict, Verdict::NoVerdict);
    EXPECT_EQ(metric(one.workload, "ops_per_sec").judgement.test, TestKind::None);
    EXPECT_EQ(metric(one.headline, "cpu_lock_share").judgement.test, TestKind::EventProportion);
}

// lockscope's own cost is shown beside the lock share and never judged
// better or worse: less of it is the workload doing less, not a fix.
TEST(Compare, CpuRunningBpfIsAFigureWithoutADirection)
{
    std::vector<Capture> bs, as;
    for (int run = 0; run < 3; ++run) {
        auto [b, a] = knownPair();
        b.cpu.samples = a.cpu.samples = 10000;
        b.cpu.bpf_samples = 2000 + uint64_t(run) * 30;
        a.cpu.bpf_samples = 500 + uint64_t(run) * 20;
        bs.push_back(b);
        as.push_back(a);
    }
    const Comparison c = compareSets(bs, as);
    auto it = std::find_if(c.headline.begin(), c.headline.end(),
                           [](const MetricDelta& m) { return m.name == "cpu_bpf_share"; });
    ASSERT_NE(it, c.headline.end());
    EXPECT_DOUBLE_EQ(it->value.before, 20.3);
    EXPECT_DOUBLE_EQ(it->value.after, 5.2);
    EXPECT_EQ(it->judgement.verdict, Verdict::NoVerdict);
    EXPECT_NE(it->judgement.reason.str().find("changed beyond noise; no better/worse direction"),
        std::string::npos);
    EXPECT_EQ(fmt::figureName(it->name), "CPU in BPF (lockscope's too)");
}

// A capture written before lockscope counted BPF samples (or an import)
// has no count, not a count of 0: "0.00% -> 5.2%" would read as the
// observer's cost appearing. No row then, and a note says why.
TEST(Compare, CpuRunningBpfIsComparedOnlyWhereEveryRunCountedIt)
{
    auto sets = [](bool countAllBefore, bool countAfter) {
        std::vector<Capture> bs, as;
        for (int run = 0; run < 3; ++run) {
            auto [b, a] = knownPair();
            b.cpu.samples = a.cpu.samples = 10000;
            if (countAllBefore || run != 1)
                b.cpu.bpf_samples = 2000 + uint64_t(run) * 30;
            if (countAfter)
                a.cpu.bpf_samples = 500 + uint64_t(run) * 20;
            bs.push_back(b);
            as.push_back(a);
        }
        return compareSets(bs, as);
    };
    auto row = [](const Comparison& c) {
        return std::count_if(c.headline.begin(), c.headline.end(),
                             [](const MetricDelta& m) { return m.name == "cpu_bpf_share"; });
    };
    auto notes = [](const Comparison& c, const std::string& text) {
        return std::count(c.notes.begin(), c.notes.end(), text);
    };
    const std::string afterMissing =
        "CPU in BPF (lockscope's too) not compared: the after captures do not count it (written before "
        "lockscope counted it, or imported)";
    const std::string beforeMissing =
        "CPU in BPF (lockscope's too) not compared: the before captures do not count it (written before "
        "lockscope counted it, or imported)";
    const Comparison counted = sets(true, true);
    EXPECT_EQ(row(counted), 1);
    EXPECT_EQ(notes(counted, afterMissing) + notes(counted, beforeMissing), 0);
    const Comparison afterOld = sets(true, false);
    EXPECT_EQ(row(afterOld), 0);
    EXPECT_EQ(notes(afterOld, afterMissing), 1);
    const Comparison oneBeforeRunOld = sets(false, true);
    EXPECT_EQ(row(oneBeforeRunOld), 0) << "the other two runs' sum would read as the side's";
    EXPECT_EQ(notes(oneBeforeRunOld, beforeMissing), 1);
    const Comparison neither = sets(false, false);
    EXPECT_EQ(row(neither), 0);
    EXPECT_EQ(notes(neither, beforeMissing) + notes(neither, afterMissing), 0) << "nothing counted: nothing to say";
}

TEST(Compare, WarnsWhenEitherSideLostEvents)
{
    auto [b, a] = knownPair();
    a.stats.lost = 42;
    const Comparison c = compare(b, a);
    EXPECT_NE(std::find_if(c.warnings.begin(), c.warnings.end(),
                           [](const std::string& w) {
                               return w.find("after, of 0 events: 100.00% of events lost (42)") == 0;
                           }),
              c.warnings.end());
}

TEST(Compare, TooFewEventsIsInsufficientData)
{
    Capture b, a;
    b.stacks.push_back(makeStack(1, {"x"}));
    a.stacks.push_back(makeStack(1, {"x"}));
    b.locks.push_back(makeLock("l", 1, 3, 1000));
    a.locks.push_back(makeLock("l", 1, 2, 100000));
    EXPECT_EQ(compare(b, a).locks[0].judgement.verdict, Verdict::InsufficientData);
}
