// SPDX-License-Identifier: GPL-2.0-or-later
#include "lockscope/capture/units.h"

#include <cmath>
#include <cstdio>

#include "lockscope/capture/histogram.h"

namespace lockscope::units {

namespace {

std::string withUnit(const char* format, double v, const char* unit)
{
    char buf[64];
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wformat-nonliteral"
    // Only called with the literal formats below.
    (void)std::snprintf(buf, sizeof buf, format, v);
#pragma GCC diagnostic pop
    return std::string(buf) + " " + unit;
}

} // namespace

std::string duration(double ns)
{
    const double a = std::fabs(ns);
    if (a < 1e3)
        return withUnit("%.0f", ns, "ns");
    if (a < 1e6)
        return withUnit("%.2f", ns / 1e3, "us");
    if (a < 1e9)
        return withUnit("%.2f", ns / 1e6, "ms");
    if (a < 60e9)
        return withUnit("%.2f", ns / 1e9, "s");
    if (a < 3600e9)
        return withUnit("%.2f", ns / 60e9, "m");
    return withUnit("%.2f", ns / 3600e9, "h");
}

std::string bucketLabel(unsigned bucket)
{
    const auto low = static_cast<double>(Log2Hist::bucketLow(bucket));
    if (low < 1e3)
        return withUnit("%.0f", low, "ns");
    static const char* const kUnits[] = {"us", "ms", "s"};
    double v = low / 1e3;
    unsigned u = 0;
    while (v >= 1000.0 && u < 2) {
        v /= 1000.0;
        ++u;
    }
    return withUnit(v >= 100.0 ? "%.0f" : v >= 10.0 ? "%.1f" : "%.2f", v, kUnits[u]);
}

} // namespace lockscope::units
