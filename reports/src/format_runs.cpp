// SPDX-License-Identifier: GPL-2.0-or-later
#include "format_runs.h"

#include <cmath>
#include <cstdio>

#include "format_util.h"

namespace lockscope::reports::fmt {

namespace {
std::string fixed(double v, int decimals)
{
    char b[64];
    std::snprintf(b, sizeof b, "%.*f", decimals, v);
    return b;
}
} // namespace

std::string figureValue(double v, const std::string& unit)
{
    if (unit == "ns")
        return duration(v);
    if (unit == "ns/s")
        return duration(v) + "/s";
    if (unit == "%")
        return fixed(v, 2) + "%";
    if (unit == "/s")
        return fixed(v, std::fabs(v) >= 100.0 ? 0 : 2) + "/s";
    if (unit == "ns/op")
        return duration(v) + "/op";
    if (unit == "/op" || unit == "/1k ops") {
        char b[64];
        std::snprintf(b, sizeof b, "%.3g", v);
        return b + unit;
    }
    return number(v) + (unit.empty() ? "" : " " + unit);
}

std::string spread(const RunSummary& s)
{
    if (s.n < 2)
        return "";
    return "±" + fixed(s.coeffVarPct(), 1) + "%";
}

std::string change(const MetricDelta& m)
{
    if (m.isPercent())
        return (m.value.delta() >= 0.0 ? "+" : "") + fixed(m.value.delta(), 2) + " pp";
    return pct(m.value);
}

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
    return name == "cpu_lock_share" ? "CPU in lock functions" : name;
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
        return "each judged on wait and hold time per operation (operations/s changed by " + pct(c.ops_per_s) +
               "), the strongest well-supported change first; other changed figures below it";
    if (c.varianceKnown())
        return "each judged on total wait/s and total hold/s, the strongest well-supported change first; other "
               "changed figures below it";
    for (const auto& l : c.locks)
        if (l.has_wait)
            return "judged on total wait/s, or total hold/s when a lock has no waits";
    return "judged on total hold/s (no waits on either side)";
}

bool hasData(const MetricDelta& m)
{
    return m.value.before != 0.0 || m.value.after != 0.0;
}

} // namespace lockscope::reports::fmt
