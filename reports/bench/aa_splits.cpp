// SPDX-License-Identifier: GPL-2.0-or-later
// A/A false-positive rate of compareSets on real captures of one workload on
// one kernel: every way (or a seeded sample of the ways) to split the runs
// into two disjoint sets of K, compared at default settings. Any Improved or
// Regressed lock verdict is a false positive. Also prints, for contrast, how
// often one run per side gets a change from the event tests, which is why one
// run a side gives no verdict. Numbers go to reports/README.md.
//
// usage: lockscope_aa_splits K[:K2] MAX_SPLITS ALPHA [--no-floors] capture.json... [-- patched.json...]
//   K:K2 puts K runs before and K2 after (1:3, 3:1: one run against three).
//   with "-- patched...": instead of A/A, every K-subset of the first set
//   against every K2-subset of the second (the injected-change detection rate).
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "lockscope/reports/compare.h"
#include "lockscope/reports/input.h"

using namespace lockscope;
using namespace lockscope::reports;

namespace {
struct Tally {
    size_t comparisons = 0, withChange = 0, judged = 0, changed = 0;
    size_t figures = 0, figuresChanged = 0, withFigureChange = 0;  // every judged figure row of every lock
    std::vector<std::string> examples;
};

// A verdict; with one run a side, a change the event test finds (no verdict,
// compare_runs.cpp: judgeEvents, but a test that ran and passed).
bool called(const Judgement& j, bool oneRun)
{
    return oneRun ? j.verdict == Verdict::NoVerdict && j.test != TestKind::None : j.decided();
}

void add(Tally& t, const Comparison& c)
{
    const bool oneRun = !c.varianceKnown();
    ++t.comparisons;
    bool any = false, anyFigure = false;
    for (const auto& l : c.locks)
        for (const auto& m : l.runs) {
            if (m.judgement.test == TestKind::None)
                continue;
            ++t.figures;
            if (called(m.judgement, oneRun)) {
                ++t.figuresChanged;
                anyFigure = true;
            }
        }
    t.withFigureChange += anyFigure;
    for (const auto& l : c.locks) {
        if (l.judgement.test == TestKind::None)
            continue;
        ++t.judged;
        if (called(l.judgement, oneRun)) {
            ++t.changed;
            any = true;
            if (t.examples.size() < 5)
                t.examples.push_back(l.key + " " + l.judgement.basis.str() + " "
                    + toString(l.judgement.verdict) + " (" + toString(l.judgement.test) + ")");
        }
    }
    t.withChange += any;
}

void print(const char* what, const Tally& t)
{
    std::printf("%s: %zu comparisons, %zu (%.1f%%) with a significant lock verdict; %zu of %zu judged lock rows "
                "(%.2f%%) significant\n",
                what, t.comparisons, t.withChange, t.comparisons ? 100.0 * double(t.withChange) / double(t.comparisons) : 0.0,
                t.changed, t.judged, t.judged ? 100.0 * double(t.changed) / double(t.judged) : 0.0);
    if (t.figures)
        std::printf("    any figure of any lock: %zu (%.1f%%) comparisons with a changed figure; %zu of %zu judged "
                    "figure rows (%.2f%%)\n",
                    t.withFigureChange, 100.0 * double(t.withFigureChange) / double(t.comparisons), t.figuresChanged,
                    t.figures, 100.0 * double(t.figuresChanged) / double(t.figures));
    for (const auto& e : t.examples)
        std::printf("    e.g. %s\n", e.c_str());
}

// All K-subsets of {0..n-1}.
std::vector<std::vector<size_t>> subsets(size_t n, size_t k)
{
    std::vector<std::vector<size_t>> out;
    std::vector<bool> pick(n, false);
    std::fill(pick.begin(), pick.begin() + ptrdiff_t(k), true);
    do {
        std::vector<size_t> s;
        for (size_t i = 0; i < n; ++i)
            if (pick[i])
                s.push_back(i);
        out.push_back(s);
    } while (std::prev_permutation(pick.begin(), pick.end()));
    return out;
}

std::vector<const Capture*> pick(const std::vector<Capture>& all, const std::vector<size_t>& idx)
{
    std::vector<const Capture*> v;
    for (size_t i : idx)
        v.push_back(&all[i]);
    return v;
}
} // namespace

int main(int argc, char** argv)
{
    if (argc < 6) {
        std::fprintf(stderr, "usage: %s K MAX_SPLITS ALPHA [--no-floors] capture.json... [-- patched.json...]\n",
                     argv[0]);
        return 2;
    }
    char* rest = nullptr;
    const size_t k = std::strtoul(argv[1], &rest, 10);
    const size_t k2 = *rest == ':' ? std::strtoul(rest + 1, nullptr, 10) : k;
    const size_t maxSplits = std::strtoul(argv[2], nullptr, 10);
    if (k == 0 || k2 == 0) {
        std::fprintf(stderr, "K and K2 must be 1 or more: %s\n", argv[1]);
        return 2;
    }
    CompareOptions o;
    o.alpha = std::strtod(argv[3], nullptr);
    std::vector<std::string> a, b;
    bool second = false;
    for (int i = 4; i < argc; ++i) {
        if (std::string(argv[i]) == "--no-floors") {
            // The absolute floors off: what the tests alone would flag.
            o.floor_cpu_pct = o.floor_events_per_s = o.floor_ns = o.floor_events_per_op = 0.0;
            continue;
        }
        if (std::string(argv[i]) == "--")
            second = true;
        else
            (second ? b : a).push_back(argv[i]);
    }
    try {
        const auto [runsA, runsB] = loadSets(a, b.empty() ? std::vector<std::string>{a.front()} : b);
        std::mt19937 rng(42);
        Tally sets, singles;
        if (b.empty()) {
            // A/A: disjoint K- and K2-subsets (first, second); with K = K2 first < second counts each split once.
            if (k + k2 > runsA.size())
                throw std::invalid_argument(std::to_string(k) + " + " + std::to_string(k2) + " runs needed, " +
                                            std::to_string(runsA.size()) + " given");
            const auto all = subsets(runsA.size(), k), all2 = subsets(runsA.size(), k2);
            std::vector<std::pair<size_t, size_t>> pairs;
            for (size_t i = 0; i < all.size(); ++i)
                for (size_t j = k == k2 ? i + 1 : 0; j < all2.size(); ++j) {
                    std::vector<size_t> both;
                    std::set_intersection(all[i].begin(), all[i].end(), all2[j].begin(), all2[j].end(),
                                          std::back_inserter(both));
                    if (both.empty())
                        pairs.emplace_back(i, j);
                }
            std::shuffle(pairs.begin(), pairs.end(), rng);
            if (pairs.size() > maxSplits)
                pairs.resize(maxSplits);
            for (const auto& [i, j] : pairs)
                add(sets, compareSets(pick(runsA, all[i]), pick(runsA, all2[j]), o));
            for (size_t i = 0; i < runsA.size(); ++i)
                for (size_t j = i + 1; j < runsA.size(); ++j)
                    add(singles, compare(runsA[i], runsA[j], o));
            std::printf("A/A on %zu runs, %zu vs %zu runs per side\n", runsA.size(), k, k2);
        } else {
            if (k > runsA.size() || k2 > runsB.size())
                throw std::invalid_argument("fewer runs than K or K2");
            auto sa = subsets(runsA.size(), k), sb = subsets(runsB.size(), k2);
            for (const auto& x : sa)
                for (const auto& y : sb)
                    if (sets.comparisons < maxSplits)
                        add(sets, compareSets(pick(runsA, x), pick(runsB, y), o));
            for (const auto& x : runsA)
                for (const auto& y : runsB)
                    add(singles, compare(x, y, o));
            std::printf("A/B: %zu base runs, %zu patched runs, %zu vs %zu runs per side\n", runsA.size(),
                        runsB.size(), k, k2);
        }
        print("run sets (judgeFigure: Welch t, one run's t or quasi-Poisson + ranges + effect and absolute floors)",
              sets);
        print("one run per side (what the event tests call a change; no verdict)", singles);
    } catch (const std::exception& e) {
        std::fprintf(stderr, "%s\n", e.what());
        return 1;
    }
    return 0;
}
