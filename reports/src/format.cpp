// SPDX-License-Identifier: GPL-2.0-or-later
#include "lockscope/reports/format.h"

#include <cmath>
#include <cstdio>

namespace lockscope::reports::fmt {

namespace {
// printf's text of one figure, then the style's minus sign and digit groups:
// the plain style leaves printf's bytes as they are.
std::string restyle(std::string t, const Style& s)
{
    const bool negative = !t.empty() && t.front() == '-';
    const size_t from = negative || (!t.empty() && t.front() == '+') ? 1 : 0;
    if (!s.thousands.empty()) {
        size_t end = from;
        while (end < t.size() && t[end] >= '0' && t[end] <= '9')
            ++end;
        for (size_t at = end; at > from + 3; at -= 3)
            t.insert(at - 3, s.thousands);
    }
    return negative ? std::string(s.minus) + t.substr(1) : t;
}

std::string printf1(const char* f, int decimals, double v)
{
    char buf[64];
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wformat-nonliteral"
    // Only called with the literal formats below.
    (void)std::snprintf(buf, sizeof buf, f, decimals, v);
#pragma GCC diagnostic pop
    return buf;
}
} // namespace

std::string fixed(double v, int decimals, const Style& s) { return restyle(printf1("%.*f", decimals, v), s); }

std::string number(double v, const Style& s)
{
    return fixed(v, v == std::floor(v) && std::fabs(v) < 1e18 ? 0 : 2, s);
}

std::string grouped(uint64_t v, std::string_view separator)
{
    return restyle(std::to_string(v), Style{separator, "-", "", "", ""});
}

std::string significant(double v, int digits, const Style& s) { return restyle(printf1("%.*g", digits, v), s); }

std::string percent(double fraction, int decimals, const Style& s)
{
    if (!std::isfinite(fraction))
        return std::string(s.none);
    return percentValue(fraction * 100.0, decimals, s);
}

std::string percentValue(double pct, int decimals, const Style& s)
{
    return fixed(pct, decimals, s) + std::string(s.pct_gap) + "%";
}

std::string pct(const Delta& d, const Style& s)
{
    if (d.before == 0.0)
        return d.after == 0.0 ? "=" : "new";
    if (d.after == 0.0)
        return "gone";
    return restyle(printf1("%+.*f", 1, *d.pct()), s) + std::string(s.pct_gap) + "%";
}

std::string signedDuration(double ns) { return (ns > 0 ? "+" : ns < 0 ? "-" : "") + duration(std::fabs(ns)); }
std::string signedNumber(double v) { return (v > 0 ? "+" : v < 0 ? "-" : "") + number(std::fabs(v)); }

std::string pValue(double p) { return p < 0.001 ? "<0.001" : printf1("%.*f", 3, p); }

std::string figureValue(double v, const std::string& unit, const Style& s)
{
    // A rare lock's wait per operation is a fraction of a ns: "0 ns/op" on both
    // sides beside a change of -17% reads as a contradiction.
    if (unit == "ns/op" && v != 0.0 && std::fabs(v) < 10.0)
        return significant(v, 3, s) + " ns/op";
    if (unit == "ns" || unit == "ns/s" || unit == "ns/op")
        return duration(v) + unit.substr(2);
    if (unit == "%")
        return percentValue(v, 2, s);
    if (unit == "/s")
        return fixed(v, std::fabs(v) >= 100.0 ? 0 : 2, s) + "/s";
    if (unit == "/op" || unit == "/1k ops")
        return significant(v, 3, s) + unit;
    return number(v, s) + (unit.empty() ? "" : " " + unit);
}

std::string spread(const RunSummary& r, const Style& s)
{
    return r.n < 2 ? "" : "±" + percentValue(r.coeffVarPct(), 1, s);
}

std::string change(const MetricDelta& m, const Style& s)
{
    if (m.isPercent())
        return (m.value.delta() >= 0.0 ? "+" : "") + fixed(m.value.delta(), 2, s) + " pp";
    return pct(m.value, s);
}

std::string sideWithSpread(const MetricDelta& m, bool after, const Style& s)
{
    const std::string v = figureValue(after ? m.value.after : m.value.before, m.unit, s);
    const std::string sd = spread(after ? m.after_runs : m.before_runs, s);
    return sd.empty() ? v : v + " " + sd;
}

std::string lockLabel(const std::string& key, const std::string& name, const Style& s)
{
    const std::string beside = Lock::nameBesideKey(key, name);
    return beside.empty() ? key : key + std::string(s.name_gap) + "[" + beside + "]";
}

} // namespace lockscope::reports::fmt
