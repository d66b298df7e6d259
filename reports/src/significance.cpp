// SPDX-License-Identifier: GPL-2.0-or-later
#include "lockscope/reports/significance.h"

#include <algorithm>
#include <cmath>
#include <vector>

namespace lockscope::reports {

namespace {
// Series expansion of the lower regularized gamma P(a, x); converges for x < a + 1.
double gammaPSeries(double a, double x)
{
    double term = 1.0 / a;
    double sum = term;
    for (int n = 1; n < 1000; ++n) {
        term *= x / (a + n);
        sum += term;
        if (std::fabs(term) < std::fabs(sum) * 1e-15)
            break;
    }
    return sum * std::exp(-x + a * std::log(x) - std::lgamma(a));
}

// Continued fraction (modified Lentz) for Q(a, x); converges for x >= a + 1.
double gammaQFraction(double a, double x)
{
    constexpr double tiny = 1e-300;
    double b = x + 1.0 - a;
    double c = 1.0 / tiny;
    double d = 1.0 / b;
    double h = d;
    for (int i = 1; i < 1000; ++i) {
        const double an = -i * (i - a);
        b += 2.0;
        d = an * d + b;
        if (std::fabs(d) < tiny)
            d = tiny;
        c = b + an / c;
        if (std::fabs(c) < tiny)
            c = tiny;
        d = 1.0 / d;
        const double del = d * c;
        h *= del;
        if (std::fabs(del - 1.0) < 1e-15)
            break;
    }
    return std::exp(-x + a * std::log(x) - std::lgamma(a)) * h;
}

double binomialTwoSided(uint64_t k, uint64_t n, double p)
{
    // Exact: sum the probabilities of all outcomes no more likely than k.
    auto logPmf = [&](uint64_t i) {
        const double di = double(i), dn = double(n);
        return std::lgamma(dn + 1) - std::lgamma(di + 1) - std::lgamma(dn - di + 1) + di * std::log(p) +
               (dn - di) * std::log1p(-p);
    };
    const double observed = logPmf(k);
    double sum = 0.0;
    for (uint64_t i = 0; i <= n; ++i) {
        const double lp = logPmf(i);
        if (lp <= observed + 1e-9)
            sum += std::exp(lp);
    }
    return std::min(1.0, sum);
}
} // namespace

double gammaQ(double a, double x)
{
    if (x <= 0.0)
        return 1.0;
    if (x < a + 1.0)
        return std::clamp(1.0 - gammaPSeries(a, x), 0.0, 1.0);
    return std::clamp(gammaQFraction(a, x), 0.0, 1.0);
}

ChiSquareResult chiSquareHomogeneity(const Log2Hist& a, const Log2Hist& b)
{
    ChiSquareResult r;
    const double na = double(a.count()), nb = double(b.count());
    const double n = na + nb;
    if (na == 0.0 || nb == 0.0)
        return r;
    const double small = std::min(na, nb) / n;
    // Pool adjacent buckets until the smaller expected count reaches 5.
    std::vector<std::pair<double, double>> groups;
    double ga = 0.0, gb = 0.0;
    for (unsigned i = 0; i < Log2Hist::kBuckets; ++i) {
        ga += double(a.bucket(i));
        gb += double(b.bucket(i));
        if ((ga + gb) * small >= 5.0) {
            groups.emplace_back(ga, gb);
            ga = gb = 0.0;
        }
    }
    if (ga + gb > 0.0) {
        if (groups.empty())
            groups.emplace_back(ga, gb);
        else {
            groups.back().first += ga;
            groups.back().second += gb;
        }
    }
    if (groups.size() < 2)
        return r;
    for (const auto& [oa, ob] : groups) {
        const double ea = (oa + ob) * na / n, eb = (oa + ob) * nb / n;
        r.statistic += (oa - ea) * (oa - ea) / ea + (ob - eb) * (ob - eb) / eb;
    }
    r.dof = unsigned(groups.size() - 1);
    r.p_value = gammaQ(r.dof / 2.0, r.statistic / 2.0);
    return r;
}

double poissonRateTest(uint64_t n1, double t1, uint64_t n2, double t2)
{
    const uint64_t n = n1 + n2;
    if (n == 0)
        return 1.0;
    // Unknown or wildly different exposures: compare the raw counts.
    const double p = (t1 > 0.0 && t2 > 0.0) ? t1 / (t1 + t2) : 0.5;
    if (n <= 2000)
        return binomialTwoSided(n1, n, p);
    const double mean = double(n) * p;
    const double sd = std::sqrt(double(n) * p * (1.0 - p));
    const double z = std::max(0.0, std::fabs(double(n1) - mean) - 0.5) / sd;
    return std::erfc(z / std::sqrt(2.0));
}

Significance testHistograms(const Log2Hist& before, double before_s, const Log2Hist& after, double after_s,
                            double effect_pct, double alpha, double min_effect_pct)
{
    Significance s;
    const ChiSquareResult chi = chiSquareHomogeneity(before, after);
    s.chi_square = chi.statistic;
    s.dof = chi.dof;
    s.shape_p = chi.p_value;
    s.rate_p = poissonRateTest(before.count(), before_s, after.count(), after_s);
    s.p_value = std::min(1.0, 2.0 * std::min(s.shape_p, s.rate_p));
    s.significant = s.p_value < alpha && std::fabs(effect_pct) >= min_effect_pct;
    return s;
}

} // namespace lockscope::reports
