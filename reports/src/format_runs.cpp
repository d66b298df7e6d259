// SPDX-License-Identifier: GPL-2.0-or-later
#include "format_runs.h"

#include <cmath>
#include <cstdio>

#include "format_util.h"

namespace lockscope::reports::fmt {

std::string testAndP(const Judgement& j)
{
    if (j.test == TestKind::None || !j.p_value)
        return "";
    // A small p beside "no significant change" is not a contradiction: the change is too small to matter.
    const char* floor = j.below_effect_floor ? "under the effect floor; " : j.below_floor ? "under the absolute floor; " : "";
    std::string t = std::string(floor) + toString(j.test) + ", p " + pValue(*j.p_value);
    if (j.runs_to_decide)
        t += "; about " + std::to_string(j.runs_to_decide) + " runs a side would decide this";
    return t;
}

std::string verdictWithTest(const Judgement& j)
{
    std::string t = toString(j.verdict);
    const std::string tp = testAndP(j);
    if (!tp.empty())
        t += " (" + tp + ")";
    return t;
}

std::string figureName(const std::string& name)
{
    if (name == "cpu_lock_share")
        return kCpuLockLabel;
    return name == "cpu_bpf_share" ? std::string(kCpuBpfLabel) : name;
}

std::string meanSpread(const MetricDelta& m, bool after)
{
    const RunSummary& s = after ? m.after_runs : m.before_runs;
    if (s.n < 2)
        return figureValue(s.mean, m.unit);
    return figureValue(s.mean, m.unit) + " ± " + figureValue(s.stddev, m.unit == "%" ? "%" : m.unit);
}

std::string lockBasisNote(const Comparison& c)
{
    if (c.varianceKnown() && c.per_op_leads)
        return "each judged on wait and hold time per operation (operations/s differ by " + pct(c.ops_per_s) +
               "), the strongest well-supported change first; other changed figures below it";
    if (c.varianceKnown())
        return "each judged on total wait/s and total hold/s, the strongest well-supported change first; other "
               "changed figures below it";
    for (const auto& l : c.locks)
        if (l.has_wait)
            return "shown on total wait/s, or total hold/s when a lock has too few waits; one run a side: no "
                   "verdicts, the largest changes the event tests see first";
    return "shown on total hold/s (no waits on either side); one run a side: no verdicts, the largest changes the "
           "event tests see first";
}

bool hasData(const MetricDelta& m)
{
    return m.value.before != 0.0 || m.value.after != 0.0;
}

} // namespace lockscope::reports::fmt
