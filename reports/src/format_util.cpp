// SPDX-License-Identifier: GPL-2.0-or-later
#include "format_util.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace lockscope::reports::fmt {

namespace {
std::string printf2(const char* f, double v)
{
    char buf[64];
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wformat-nonliteral"
    // Only called with the literal formats below.
    std::snprintf(buf, sizeof buf, f, v);
#pragma GCC diagnostic pop
    return buf;
}
} // namespace

std::string duration(double ns)
{
    const double a = std::fabs(ns);
    if (a < 1e3)
        return printf2("%.0f ns", ns);
    if (a < 1e6)
        return printf2("%.2f us", ns / 1e3);
    if (a < 1e9)
        return printf2("%.2f ms", ns / 1e6);
    if (a < 60e9)
        return printf2("%.2f s", ns / 1e9);
    if (a < 3600e9)
        return printf2("%.2f m", ns / 60e9);
    return printf2("%.2f h", ns / 3600e9);
}

std::string number(double v)
{
    if (v == std::floor(v) && std::fabs(v) < 1e18)
        return printf2("%.0f", v);
    return printf2("%.2f", v);
}

std::string pct(const Delta& d)
{
    if (d.before == 0.0)
        return d.after == 0.0 ? "=" : "new";
    if (d.after == 0.0)
        return "gone";
    return printf2("%+.1f%%", *d.pct());
}

std::string signedDuration(double ns) { return (ns > 0 ? "+" : ns < 0 ? "-" : "") + duration(std::fabs(ns)); }
std::string signedNumber(double v) { return (v > 0 ? "+" : v < 0 ? "-" : "") + number(std::fabs(v)); }

std::string pValue(double p)
{
    if (p < 0.001)
        return "<0.001";
    return printf2("%.3f", p);
}

std::string percent(double fraction) { return printf2("%.2f%%", fraction * 100.0); }

std::string padLeft(const std::string& s, size_t width)
{
    return s.size() >= width ? s : std::string(width - s.size(), ' ') + s;
}

std::string padRight(const std::string& s, size_t width)
{
    return s.size() >= width ? s : s + std::string(width - s.size(), ' ');
}

std::string truncate(const std::string& s, size_t width)
{
    return s.size() <= width ? s : s.substr(0, width - 3) + "...";
}

std::string htmlEscape(const std::string& s)
{
    std::string o;
    o.reserve(s.size());
    for (char c : s) {
        switch (c) {
        case '&': o += "&amp;"; break;
        case '<': o += "&lt;"; break;
        case '>': o += "&gt;"; break;
        case '"': o += "&quot;"; break;
        case '\'': o += "&#39;"; break;
        default: o += c;
        }
    }
    return o;
}

std::string mdEscape(const std::string& s)
{
    std::string o;
    for (char c : s) {
        if (c == '|' || c == '*' || c == '_' || c == '`' || c == '<' || c == '>')
            o += '\\';
        o += c;
    }
    return o;
}

std::string bucketLabel(unsigned bucket)
{
    const uint64_t v = Log2Hist::bucketLow(bucket);
    static const char* kSuffix[] = {"", "K", "M", "G", "T", "P", "E"};
    unsigned s = 0;
    uint64_t x = v;
    // Binary prefixes keep powers of two short (1024 → 1K).
    while (x >= 1024 && x % 1024 == 0 && s < 6) {
        x /= 1024;
        ++s;
    }
    return std::to_string(x) + kSuffix[s];
}

std::pair<unsigned, unsigned> bucketRange(const Log2Hist& a, const Log2Hist* b)
{
    unsigned lo = Log2Hist::kBuckets, hi = 0;
    auto scan = [&](const Log2Hist& h) {
        for (unsigned i = 0; i < Log2Hist::kBuckets; ++i)
            if (h.buckets()[i]) {
                lo = std::min(lo, i);
                hi = std::max(hi, i);
            }
    };
    scan(a);
    if (b)
        scan(*b);
    return {lo, hi};
}

namespace {
std::string bar(double fraction, size_t width)
{
    const auto n = size_t(std::lround(std::clamp(fraction, 0.0, 1.0) * double(width)));
    // A non-empty bucket always shows at least one @.
    const size_t shown = (fraction > 0.0 && n == 0) ? 1 : n;
    return std::string(shown, '@') + std::string(width - shown, ' ');
}
} // namespace

std::string textHistogram(const Log2Hist& h, const std::string& indent, const char* unit)
{
    if (h.empty())
        return indent + "(no events)\n";
    const auto [lo, hi] = bucketRange(h, nullptr);
    uint64_t peak = 0;
    for (unsigned i = lo; i <= hi; ++i)
        peak = std::max(peak, h.buckets()[i]);
    std::string out = indent + padLeft(std::string("value (") + unit + ")", 15) +
                      "  ------------ distribution ------------  count\n";
    for (unsigned i = lo; i <= hi; ++i) {
        const uint64_t c = h.buckets()[i];
        out += indent + padLeft(std::to_string(Log2Hist::bucketLow(i)), 15) + " |" +
               bar(double(c) / double(peak), 40) + "| " + std::to_string(c) + "\n";
    }
    return out;
}

std::string textHistogramPair(const Log2Hist& before, const Log2Hist& after, const std::string& indent)
{
    if (before.empty() && after.empty())
        return indent + "(no events)\n";
    const auto [lo, hi] = bucketRange(before, &after);
    auto peak = [&](const Log2Hist& h) {
        uint64_t p = 0;
        for (unsigned i = lo; i <= hi; ++i)
            p = std::max(p, h.buckets()[i]);
        return p;
    };
    const uint64_t pb = peak(before), pa = peak(after);
    std::string out = indent + padLeft("value (ns)", 15) + "  ------ before ------ " + padLeft("count", 9) +
                      "  ------ after ------- " + padLeft("count", 9) + "\n";
    for (unsigned i = lo; i <= hi; ++i) {
        const uint64_t b = before.buckets()[i], a = after.buckets()[i];
        out += indent + padLeft(std::to_string(Log2Hist::bucketLow(i)), 15) + " |" +
               bar(pb ? double(b) / double(pb) : 0.0, 20) + "|" + padLeft(std::to_string(b), 9) + "  |" +
               bar(pa ? double(a) / double(pa) : 0.0, 20) + "|" + padLeft(std::to_string(a), 9) + "\n";
    }
    return out;
}

std::string pathText(const std::vector<std::string>& frames, size_t maxFrames)
{
    std::string s;
    size_t n = 0;
    for (auto it = frames.rbegin(); it != frames.rend(); ++it, ++n) {
        if (n == maxFrames) {
            s += " <- ...";
            break;
        }
        if (n)
            s += " <- ";
        s += *it;
    }
    return s;
}

std::string metricValue(double v, const std::string& unit)
{
    if (unit == "ns")
        return duration(v);
    if (unit == "%")
        return printf2("%.2f%%", v);
    return number(v) + (unit.empty() ? "" : " " + unit);
}

} // namespace lockscope::reports::fmt
