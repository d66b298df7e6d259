// SPDX-License-Identifier: GPL-2.0-or-later
#include "lockscope/reports/judge.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>

#include "compare_internal.h"
#include "lockscope/capture/units.h"
#include "lockscope/reports/format.h"
#include "lockscope/reports/significance.h"

namespace lockscope::reports {

const std::vector<JudgeFigure>& judgeFigures()
{
    // "holds" is left out: the hold count grows with throughput as much as
    // with contention, and the compare gives it no better/worse direction.
    static const std::vector<JudgeFigure> figures = {
        {"total_wait", "total wait/s", "ns/s", false}, {"total_hold", "total hold/s", "ns/s", true},
        {"contentions", "contentions/s", "/s", false}, {"mean_wait", "mean wait", "ns", false},
        {"mean_hold", "mean hold", "ns", true},        {"p99_wait", "p99 wait", "ns", false},
        {"p99_hold", "p99 hold", "ns", true},
    };
    return figures;
}

std::string judgeFigureNames()
{
    std::string out;
    for (const auto& f : judgeFigures())
        out += (out.empty() ? "" : ", ") + std::string(f.name);
    return out;
}

const JudgeFigure& judgeFigure(const std::string& name)
{
    for (const auto& f : judgeFigures())
        if (name == f.name)
            return f;
    throw std::invalid_argument("unknown figure '" + name + "': one of " + judgeFigureNames());
}

JudgeTarget parseJudgeTarget(const std::string& text)
{
    // Lock keys hold ':' rarely but may ("rcu_state+0xcd8" does not; a
    // cgroup-qualified key could): the figure is what follows the last ':'
    // when that is a figure name.
    JudgeTarget t{text, ""};
    const auto colon = text.rfind(':');
    if (colon != std::string::npos) {
        const std::string fig = text.substr(colon + 1);
        judgeFigure(fig);
        t.lock = text.substr(0, colon);
        t.figure = fig;
    }
    if (t.lock.empty())
        throw std::invalid_argument("--judge needs LOCK:FIGURE, e.g. hash_lock:total_hold (figures: " +
                                    judgeFigureNames() + ")");
    return t;
}

const char* toString(Change c) noexcept
{
    switch (c) {
    case Change::Same: return "same";
    case Change::Up: return "up";
    case Change::Down: return "down";
    case Change::Unclear: return "unclear";
    }
    return "?";
}

const char* toString(Call c) noexcept
{
    switch (c) {
    case Call::Good: return "good";
    case Call::Bad: return "bad";
    case Call::Undecided: return "undecided";
    }
    return "?";
}

int exitCode(Call c) noexcept
{
    switch (c) {
    case Call::Good: return 0;
    case Call::Bad: return 1;
    case Call::Undecided: return 125;
    }
    return 125;
}

std::string FigureChange::text() const
{
    std::string s = verdict;
    if (p_value)
        s += " (p " + fmt::significant(*p_value, 2) + ")";
    if (change == Change::Unclear && !reason.empty())
        s += ": " + reason;
    return s;
}

std::string figureText(const JudgeFigure& figure, const RunSummary& runs)
{
    auto value = [&](double v) {
        const std::string unit = figure.unit;
        if (unit == "ns")
            return units::duration(v);
        if (unit == "ns/s")
            return units::duration(v) + "/s";
        return fmt::fixed(v, 1) + "/s";
    };
    if (runs.n == 0)
        return "-";
    if (runs.n < 2)
        return value(runs.mean) + " (n 1)";
    return value(runs.mean) + " ± " + fmt::percentValue(runs.coeffVarPct(), 1) + " (n " + std::to_string(runs.n) +
           ")";
}

namespace {

constexpr const char* kOneRunAside =
    "one run a side: no verdict without two or more runs a side, or three or more against one";

struct Identity {
    std::string key, name;
};

const Lock* byKey(const Capture& c, const std::string& key)
{
    for (const auto& l : c.locks)
        if (l.key == key)
            return &l;
    return nullptr;
}

// The busiest lock of that name in a capture (a name can cover several keys).
const Lock* byName(const Capture& c, const std::string& name)
{
    const Lock* best = nullptr;
    for (const auto& l : c.locks)
        if (!name.empty() && l.name == name &&
            (!best || l.wait.count() + l.hold.count() > best->wait.count() + best->hold.count()))
            best = &l;
    return best;
}

using Sets = std::vector<const std::vector<Capture>*>;

// The key and name the lock goes by, looked up in the sets in order (good
// first): a key first, else a lock name.
Identity identify(const Sets& sets, const std::string& lock)
{
    for (bool names : {false, true})
        for (const auto* set : sets)
            for (const auto& c : *set)
                if (const Lock* l = names ? byName(c, lock) : byKey(c, lock))
                    return Identity{l->key, l->name.empty() ? (names ? lock : "") : l->name};
    throw std::invalid_argument("lock '" + lock + "' is in none of the captures (neither a key nor a lock name)");
}

// The set with the lock renamed to id.key in every capture where it has
// another key but the same name: the compare matches locks by key only, and a
// lock's key (its caller) can move between builds with inlining.
std::vector<Capture> aligned(const std::vector<Capture>& set, const Identity& id, std::vector<std::string>& notes)
{
    std::vector<Capture> out = set;
    for (auto& c : out) {
        if (byKey(c, id.key) || id.name.empty())
            continue;
        const Lock* found = byName(c, id.name);
        if (!found)
            continue;
        Lock& l = c.locks[size_t(found - c.locks.data())];
        const std::string note = l.key + " as " + id.key + " (by name " + id.name + ")";
        if (std::find(notes.begin(), notes.end(), note) == notes.end())
            notes.push_back(note);
        l.key = id.key;
    }
    return out;
}

// The row of lock `key`, also where the comparison read it under another of
// its callers' keys (LockDelta::also_keyed).
const LockDelta* lockRow(const Comparison& c, const std::string& key)
{
    for (const auto& l : c.locks)
        if (l.key == key)
            return &l;
    for (const auto& l : c.locks)
        if (std::binary_search(l.also_keyed.begin(), l.also_keyed.end(), key))
            return &l;
    return nullptr;
}

// The lock's judged figure in a comparison, as judgeFigures() names it.
// The figure the compare judged the lock on (compare_runs.cpp: its lead
// figure over runs, or hold/s where one run's waits are too few), so that a
// bisect step and `compare` of the same runs read the same row.
std::string defaultFigure(const Comparison& c, const std::string& key)
{
    const LockDelta* l = lockRow(c, key);
    if (l)
        for (const auto& f : judgeFigures())
            if (l->judgement.basis == f.row)
                return f.name;
    return l && !l->has_wait && l->has_hold ? "total_hold" : "total_wait";
}

// How the figure moved, read from the compare's verdicts. A lock on one side
// only moved by its presence, when it has enough events there to count.
FigureChange figureChange(const Comparison& c, const std::string& key, const JudgeFigure& fig)
{
    FigureChange f;
    const LockDelta* l = lockRow(c, key);
    if (!l) {
        f.change = Change::Same;
        f.verdict = "absent on both sides";
        return f;
    }
    const MetricDelta* row = nullptr;
    for (const auto& m : l->runs)
        if (m.name == fig.row)
            row = &m;
    if (row) {
        f.reference = row->before_runs;
        f.other = row->after_runs;
    }
    // One run a side decides nothing (compare_runs.cpp: judgeEvents), a lock
    // seen on one side only included: one run of the same kernel can miss a
    // lock another run contends on.
    if (!c.varianceKnown() && (row || l->presence != Presence::Both)) {
        f.verdict =
            toString(l->presence == Presence::Both ? row->judgement.verdict : detail::presenceVerdict(l->presence));
        f.change = Change::Unclear;
        f.reason = kOneRunAside;
        return f;
    }
    // With runs on both sides the compare's own decision on the row stands,
    // presence included (judgeFigure's rate test over runs).
    if (l->presence != Presence::Both && !row) {
        const bool after = l->presence == Presence::OnlyAfter;
        const uint64_t events = after ? l->wait_after.count() + l->hold_after.count()
                                      : l->wait_before.count() + l->hold_before.count();
        f.verdict = toString(detail::presenceVerdict(l->presence));
        if (events >= c.options.min_events) {
            f.change = after ? Change::Up : Change::Down;
            f.reason = "on one side only, " + std::to_string(events) + " events there";
        } else {
            f.change = Change::Unclear;
            f.reason = "on one side only, with " + std::to_string(events) + " events (fewer than " +
                       std::to_string(c.options.min_events) + ")";
        }
        return f;
    }
    if (!row) {
        f.change = Change::Same;
        f.verdict = std::string("no ") + (fig.hold ? "holds" : "waits") + " on either side";
        return f;
    }
    const Judgement& j = row->judgement;
    f.verdict = toString(j.verdict);
    f.p_value = j.p_value;
    f.reason = j.reason;
    switch (j.verdict) {
    case Verdict::Regressed: f.change = Change::Up; break;
    case Verdict::Improved: f.change = Change::Down; break;
    case Verdict::NoSignificantChange: f.change = Change::Same; break;
    case Verdict::OnlyAfter:
    case Verdict::OnlyBefore: // on one side only, undecided by its runs: within run-to-run noise
        f.change = Change::Same;
        f.reason = "on one side only, within run-to-run noise";
        break;
    default: f.change = Change::Unclear; break;
    }
    return f;
}

Change opposite(Change c) { return c == Change::Up ? Change::Down : c == Change::Down ? Change::Up : c; }

bool moved(Change c) { return c == Change::Up || c == Change::Down; }

// The rule itself. d: good -> bad; vg: good -> candidate; vb: bad -> candidate.
Call decide(const std::optional<FigureChange>& d, const FigureChange& vg, const std::optional<FigureChange>& vb,
            std::string& why)
{
    if (!vb) {
        why = "against the good runs: " + vg.text();
        if (vg.change == Change::Up)
            return Call::Bad;
        if (vg.change == Change::Same)
            return Call::Good;
        why += vg.change == Change::Down ? " (changed the other way)" : "";
        return Call::Undecided;
    }
    if (!d || !moved(d->change)) {
        why = "good and bad are alike: " + (d ? d->text() : std::string("-"));
        return Call::Undecided;
    }
    why = "against good: " + vg.text() + "; against bad: " + vb->text();
    if (vg.change == Change::Same && vb->change == opposite(d->change))
        return Call::Good;
    if (vb->change == Change::Same && vg.change == d->change)
        return Call::Bad;
    if (vg.change == Change::Same && vb->change == Change::Same)
        why += " (like both: the runs cannot tell them apart)";
    else if (moved(vg.change) && moved(vb->change))
        why += " (like neither)";
    return Call::Undecided;
}

std::string resolvedFigure(const JudgeTarget& t, const Comparison& c, const std::string& key)
{
    return t.figure.empty() ? defaultFigure(c, key) : t.figure;
}

} // namespace

FigureChange endpointChange(const std::vector<Capture>& good, const std::vector<Capture>& bad, JudgeTarget& target,
                            const CompareOptions& o)
{
    const Identity id = identify({&good, &bad}, target.lock);
    std::vector<std::string> notes;
    const Comparison c = compareSets(aligned(good, id, notes), aligned(bad, id, notes), o);
    target.lock = id.key;
    target.figure = resolvedFigure(target, c, id.key);
    return figureChange(c, id.key, judgeFigure(target.figure));
}

JudgeResult judge(const std::vector<Capture>& good, const std::vector<Capture>& candidate,
                  const std::vector<Capture>& bad, const JudgeTarget& target, const CompareOptions& o)
{
    if (good.empty() || candidate.empty())
        throw std::invalid_argument("the judge needs at least one good and one candidate capture");
    JudgeResult r;
    const Identity id = identify({&good, &bad, &candidate}, target.lock);
    r.lock = id.key;
    r.lock_name = id.name;
    const auto g = aligned(good, id, r.matched_by_name);
    const auto cand = aligned(candidate, id, r.matched_by_name);
    const Comparison vsGood = compareSets(g, cand, o);
    std::optional<Comparison> endpoints;
    if (!bad.empty())
        endpoints = compareSets(g, aligned(bad, id, r.matched_by_name), o);
    // The figure is decided on the endpoints when there are both, so every step judges the same one.
    r.figure = resolvedFigure(target, endpoints ? *endpoints : vsGood, id.key);
    const JudgeFigure& fig = judgeFigure(r.figure);
    r.vs_good = figureChange(vsGood, id.key, fig);
    if (endpoints) {
        r.endpoints = figureChange(*endpoints, id.key, fig);
        r.vs_bad = figureChange(compareSets(aligned(bad, id, r.matched_by_name), cand, o), id.key, fig);
    }
    r.call = decide(r.endpoints, r.vs_good, r.vs_bad, r.why);
    return r;
}

std::optional<PickedLock> pickChangedLock(const std::vector<Capture>& good, const std::vector<Capture>& bad,
                                          const std::string& figure, const CompareOptions& o)
{
    const Comparison c = compareSets(good, bad, o);
    struct Candidate {
        PickedLock pick;
        double p = 1.0, effect = 0.0;
        bool p_from_runs = false;
    };
    std::vector<Candidate> changed;
    for (const auto& l : c.locks) {
        JudgeTarget t{l.key, figure.empty() ? defaultFigure(c, l.key) : figure};
        const JudgeFigure& fig = judgeFigure(t.figure);
        FigureChange f = figureChange(c, l.key, fig);
        if (!moved(f.change))
            continue;
        Candidate cand{{t, f, ""}, 1.0, 0.0, false};
        for (const auto& m : l.runs)
            if (m.name == fig.row) {
                // The runs test's p even where presence gave the verdict (zeros on the absent side).
                cand.p_from_runs = m.runs_test.has_value();
                cand.p = m.runs_test ? m.runs_test->p_value : f.p_value.value_or(1.0);
                cand.effect = std::fabs(detail::effectPct(m.value));
            }
        if (l.presence != Presence::Both) {
            cand.effect = std::numeric_limits<double>::infinity();
            if (!cand.p_from_runs) {
                // One run a side: how unlikely the events are from one rate (0 on the absent side).
                const auto events = [](const Log2Hist& w, const Log2Hist& h) { return w.count() + h.count(); };
                cand.p = poissonRateTest(events(l.wait_before, l.hold_before),
                                         c.before.meta.duration_s * double(c.runs_before),
                                         events(l.wait_after, l.hold_after),
                                         c.after.meta.duration_s * double(c.runs_after));
            }
        }
        changed.push_back(std::move(cand));
    }
    if (changed.empty())
        return std::nullopt;
    // Every figure is a cost, so Up is worse. A bisect hunts the commit that
    // made something worse: an improvement between good and bad is most often
    // the regression's shadow (waiters moved to the regressed lock), and
    // between two strong changes the smaller p is chance.
    std::stable_sort(changed.begin(), changed.end(), [](const Candidate& a, const Candidate& b) {
        const bool aUp = a.pick.change.change == Change::Up, bUp = b.pick.change.change == Change::Up;
        if (aUp != bUp)
            return aUp;
        return a.p != b.p ? a.p < b.p : a.effect > b.effect;
    });
    PickedLock best = changed.front().pick;
    const JudgeFigure& fig = judgeFigure(best.target.figure);
    best.why = "picked " + best.target.lock + " " + fig.name + ": " + best.change.text() + ", " +
               figureText(fig, best.change.reference) + " -> " + figureText(fig, best.change.other) +
               "; the most significant " + (best.change.change == Change::Up ? "regression" : "change") + " of " +
               std::to_string(changed.size()) + " lock" + (changed.size() == 1 ? "" : "s") + " that changed (runs p " +
               fmt::significant(changed.front().p, 2) + ")";
    return best;
}

} // namespace lockscope::reports
