// SPDX-License-Identifier: GPL-2.0-or-later
// Lock wait percentiles estimated from a timing budget's sample: what a
// comparison may say of them (the rule itself: lockscope/capture/tail_basis.h).
#include "compare_internal.h"

#include "lockscope/capture/units.h"

namespace lockscope::reports::detail {

namespace {

// Less supported: estimated before exact, then fewer timed waits.
bool weaker(const TailBasis& a, const TailBasis& b)
{
    if (a.exact != b.exact)
        return !a.exact;
    return !a.exact && (a.verdict != b.verdict ? !a.verdict : a.timed < b.timed);
}

} // namespace

std::vector<RunLocks> runLocks(const std::vector<const Capture*>& runs)
{
    std::vector<RunLocks> out(runs.size());
    for (size_t i = 0; i < runs.size(); ++i)
        for (const auto& l : runs[i]->locks)
            out[i][l.key] = &l;
    return out;
}

TailBasis weakestTailBasis(const std::vector<const Capture*>& base, const std::vector<RunLocks>& baseLocks,
                           const std::vector<const Capture*>& patched, const std::vector<RunLocks>& patchedLocks,
                           const std::string& key, double p)
{
    TailBasis weakest;
    auto side = [&](const std::vector<const Capture*>& runs, const std::vector<RunLocks>& locks) {
        for (size_t i = 0; i < runs.size(); ++i) {
            const auto it = locks[i].find(key);
            if (it == locks[i].end())
                continue;
            const Lock& l = *it->second;
            const TailBasis b = percentileBasis(l.wait, l.wait_untimed, exactWaitNs(runs[i]->meta), p);
            if (weaker(b, weakest))
                weakest = b;
        }
    };
    side(base, baseLocks);
    side(patched, patchedLocks);
    return weakest;
}

void withholdUnsupportedTail(MetricDelta& m)
{
    if (!m.tail_basis || m.tail_basis->verdict)
        return;
    m.judgement.verdict = Verdict::NoVerdict;
    m.judgement.reason = m.name.str() + " " + m.tail_basis->text()
        + " waits (timing budget) in one run: fewer than " + std::to_string(kTimedBeyondForVerdict)
        + " timed waits beyond it";
}

std::string tailMethodNote(const Comparison& c)
{
    size_t estimated = 0;
    for (const LockDelta& l : c.locks)
        for (const MetricDelta& m : l.runs)
            if (m.tail_basis && !m.tail_basis->exact) {
                ++estimated;
                break;
            }
    if (!estimated)
        return "";
    return std::to_string(estimated) + (estimated == 1 ? " lock's" : " locks'")
        + " p99 wait rests on the waits the timing budget timed (the rest get their times); such a figure gets a "
          "verdict only with at least "
        + std::to_string(kTimedBeyondForVerdict) + " timed waits beyond it in every run. ";
}

} // namespace lockscope::reports::detail
