// SPDX-License-Identifier: GPL-2.0-or-later
#include "lockscope/reports/change_order.h"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace lockscope::reports {

int verdictSeverity(Verdict v, bool runs) noexcept
{
    if (!runs) // no verdicts: what the event test or presence marks as changed, then the withheld, then the rest
        return v == Verdict::NoVerdict || v == Verdict::OnlyAfter || v == Verdict::OnlyBefore ? 0
               : v == Verdict::Withheld                                                     ? 1
                                                                                            : 2;
    switch (v) {
    case Verdict::Regressed: return 0;
    case Verdict::Improved: return 2;
    case Verdict::Withheld: return 4;
    case Verdict::NoVerdict: return 5;
    case Verdict::OnlyAfter:
    case Verdict::OnlyBefore:
    case Verdict::InsufficientData:
    case Verdict::NoSignificantChange: return 7;
    }
    return 8;
}

namespace {
double changeSize(const LockDelta& l)
{
    const MetricDelta* m = judgedMetric(l);
    return m ? std::fabs(m->value.delta()) : 0.0;
}
} // namespace

bool changedBefore(const LockDelta& a, const LockDelta& b, bool runs)
{
    const int sa = verdictSeverity(a.judgement.verdict, runs), sb = verdictSeverity(b.judgement.verdict, runs);
    if (sa != sb)
        return sa < sb;
    return changeSize(a) > changeSize(b);
}

std::vector<size_t> changedFirstOrder(const Comparison& c)
{
    std::vector<size_t> order(c.locks.size());
    std::iota(order.begin(), order.end(), size_t{0});
    std::stable_sort(order.begin(), order.end(),
                     [&](size_t a, size_t b) { return changedBefore(c.locks[a], c.locks[b], c.varianceKnown()); });
    return order;
}

} // namespace lockscope::reports
