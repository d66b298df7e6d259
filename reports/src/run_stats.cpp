// SPDX-License-Identifier: GPL-2.0-or-later
#include "lockscope/reports/run_stats.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <tuple>

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

namespace {
// No spread to scale the difference by: the same mean is no change (p 1), any other a certain one (p 0).
void withoutSpread(RunTest& r, double delta)
{
    r.p_value = delta == 0.0 ? 1.0 : 0.0;
    r.t = delta == 0.0 ? 0.0 : std::copysign(std::numeric_limits<double>::infinity(), delta);
}
} // namespace

RunTest welchTest(const RunSummary& b, const RunSummary& a)
{
    RunTest r;
    r.ranges_separate = b.n && a.n && (b.max < a.min || a.max < b.min);
    if (b.n < 2 || a.n < 2)
        return r;
    const double vb = b.stddev * b.stddev / double(b.n), va = a.stddev * a.stddev / double(a.n);
    const double se2 = vb + va;
    if (se2 == 0.0) {
        withoutSpread(r, a.mean - b.mean);
        r.df = double(b.n + a.n - 2);
        return r;
    }
    r.t = (a.mean - b.mean) / std::sqrt(se2);
    r.df = se2 * se2 / (vb * vb / double(b.n - 1) + va * va / double(a.n - 1));
    r.p_value = studentTTwoSided(r.t, r.df);
    return r;
}

bool runsCanDecide(size_t before, size_t after) noexcept
{
    return std::min(before, after) >= 2 || (std::min(before, after) == 1 && std::max(before, after) >= 3);
}

RunTest singleRunTest(const RunSummary& b, const RunSummary& a)
{
    RunTest r;
    const RunSummary& many = b.n == 1 ? a : b;
    const RunSummary& one = b.n == 1 ? b : a;
    if (one.n != 1 || many.n < 2)
        return r;
    r.ranges_separate = one.mean < many.min || one.mean > many.max;
    r.df = double(many.n - 1);
    const double se = many.stddev * std::sqrt(1.0 + 1.0 / double(many.n));
    if (se == 0.0) {
        withoutSpread(r, a.mean - b.mean);
        return r;
    }
    r.t = (a.mean - b.mean) / se;
    r.p_value = studentTTwoSided(r.t, r.df);
    return r;
}

RunTest runsTest(const RunSummary& b, const RunSummary& a)
{
    return b.n >= 2 && a.n >= 2 ? welchTest(b, a) : singleRunTest(b, a);
}

RateTest quasiPoissonRateTest(const std::vector<double>& kb, const std::vector<double>& eb,
                              const std::vector<double>& ka, const std::vector<double>& ea)
{
    RateTest r;
    auto sum = [](const std::vector<double>& v) {
        double s = 0.0;
        for (double x : v)
            s += x;
        return s;
    };
    const double Kb = sum(kb), Ka = sum(ka), Eb = sum(eb), Ea = sum(ea);
    const size_t n = kb.size() + ka.size();
    r.df = n > 2 ? double(n - 2) : 1.0;
    if (!(Eb > 0.0) || !(Ea > 0.0))
        return r;
    r.rate_before = Kb / Eb;
    r.rate_after = Ka / Ea;
    // Each run around its own side's rate; a side with no events has nothing to disperse.
    double pearson = 0.0;
    for (const auto& [k, e, rate] : {std::tuple{&kb, &eb, r.rate_before}, std::tuple{&ka, &ea, r.rate_after}})
        for (size_t i = 0; i < k->size(); ++i) {
            const double expected = rate * (*e)[i];
            if (expected > 0.0)
                pearson += ((*k)[i] - expected) * ((*k)[i] - expected) / expected;
        }
    r.dispersion = std::max(1.0, pearson / r.df);
    const double K = Ka + Kb;
    if (K <= 0.0)
        return r;
    const double share = Ea / (Ea + Eb);
    const double se = std::sqrt(r.dispersion * K * share * (1.0 - share));
    r.z = (Ka - K * share) / se;
    r.p_value = studentTTwoSided(r.z, r.df);
    return r;
}

double studentTQuantile(double p, double df)
{
    // studentTTwoSided falls from 1 at t = 0; bisect on it (a few dozen steps give full double precision).
    double lo = 0.0, hi = 1.0;
    while (studentTTwoSided(hi, df) > p && hi < 1e12)
        hi *= 2.0;
    for (int i = 0; i < 200 && hi - lo > 1e-12 * hi; ++i) {
        const double mid = 0.5 * (lo + hi);
        (studentTTwoSided(mid, df) > p ? lo : hi) = mid;
    }
    return 0.5 * (lo + hi);
}

size_t runsToDecide(double vb, double va, double delta, double alpha, double power, size_t max_runs)
{
    if (delta == 0.0 || !(alpha > 0.0 && alpha < 1.0) || !(power > 0.0 && power < 1.0))
        return 0;
    for (size_t n = 2; n <= max_runs; ++n) {
        const double df = double(2 * n - 2);
        const double need = studentTQuantile(alpha, df) + studentTQuantile(2.0 * (1.0 - power), df);
        if (need * need * (vb + va) <= double(n) * delta * delta)
            return n;
    }
    return 0;
}

} // namespace lockscope::reports
