// SPDX-License-Identifier: GPL-2.0-or-later
#include "lockscope/reports/run_stats.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace lockscope::reports {

double RunSummary::coeffVarPct() const noexcept
{
    return mean == 0.0 ? 0.0 : stddev / std::fabs(mean) * 100.0;
}

RunSummary RunSummary::of(const std::vector<double>& values)
{
    RunSummary s;
    s.n = values.size();
    if (values.empty())
        return s;
    s.min = *std::min_element(values.begin(), values.end());
    s.max = *std::max_element(values.begin(), values.end());
    double sum = 0.0;
    for (double v : values)
        sum += v;
    s.mean = sum / double(s.n);
    if (s.n < 2)
        return s;
    double ss = 0.0;
    for (double v : values)
        ss += (v - s.mean) * (v - s.mean);
    s.stddev = std::sqrt(ss / double(s.n - 1));
    return s;
}

namespace {
// Continued fraction of I_x(a, b) (modified Lentz); converges fast for x < (a + 1) / (a + b + 2).
double betaFraction(double a, double b, double x)
{
    constexpr double tiny = 1e-300;
    double c = 1.0;
    double d = 1.0 - (a + b) * x / (a + 1.0);
    if (std::fabs(d) < tiny)
        d = tiny;
    d = 1.0 / d;
    double h = d;
    for (int m = 1; m < 10000; ++m) {
        const double m2 = 2.0 * m;
        double an = m * (b - m) * x / ((a + m2 - 1.0) * (a + m2));
        d = 1.0 + an * d;
        d = std::fabs(d) < tiny ? 1.0 / tiny : 1.0 / d;
        c = 1.0 + an / c;
        if (std::fabs(c) < tiny)
            c = tiny;
        h *= d * c;
        an = -(a + m) * (a + b + m) * x / ((a + m2) * (a + m2 + 1.0));
        d = 1.0 + an * d;
        d = std::fabs(d) < tiny ? 1.0 / tiny : 1.0 / d;
        c = 1.0 + an / c;
        if (std::fabs(c) < tiny)
            c = tiny;
        const double del = d * c;
        h *= del;
        if (std::fabs(del - 1.0) < 1e-15)
            break;
    }
    return h;
}
} // namespace

double incompleteBeta(double a, double b, double x)
{
    if (x <= 0.0)
        return 0.0;
    if (x >= 1.0)
        return 1.0;
    const double front =
        std::exp(std::lgamma(a + b) - std::lgamma(a) - std::lgamma(b) + a * std::log(x) + b * std::log1p(-x));
    // Use the fraction where it converges; the symmetry I_x(a,b) = 1 - I_{1-x}(b,a) elsewhere.
    if (x < (a + 1.0) / (a + b + 2.0))
        return std::clamp(front * betaFraction(a, b, x) / a, 0.0, 1.0);
    return std::clamp(1.0 - front * betaFraction(b, a, 1.0 - x) / b, 0.0, 1.0);
}

double studentTTwoSided(double t, double df)
{
    if (!(df > 0.0) || std::isnan(t))
        return 1.0;
    if (std::isinf(t))
        return 0.0;
    return incompleteBeta(df / 2.0, 0.5, df / (df + t * t));
}

RunTest welchTest(const RunSummary& b, const RunSummary& a)
{
    RunTest r;
    r.ranges_separate = b.n && a.n && (b.max < a.min || a.max < b.min);
    if (b.n < 2 || a.n < 2)
        return r;
    const double vb = b.stddev * b.stddev / double(b.n), va = a.stddev * a.stddev / double(a.n);
    const double se2 = vb + va;
    if (se2 == 0.0) {
        r.p_value = a.mean == b.mean ? 1.0 : 0.0;
        r.t = a.mean == b.mean ? 0.0 : std::copysign(std::numeric_limits<double>::infinity(), a.mean - b.mean);
        r.df = double(b.n + a.n - 2);
        return r;
    }
    r.t = (a.mean - b.mean) / std::sqrt(se2);
    r.df = se2 * se2 / (vb * vb / double(b.n - 1) + va * va / double(a.n - 1));
    r.p_value = studentTTwoSided(r.t, r.df);
    return r;
}

} // namespace lockscope::reports
