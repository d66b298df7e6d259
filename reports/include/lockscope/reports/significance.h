// SPDX-License-Identifier: GPL-2.0-or-later
#pragma once

#include <cstdint>

#include "lockscope/capture/histogram.h"

// Two-sample tests on bucketed latency distributions.
//
// Why these: captures hold log2 histograms, not raw samples, so tests on raw
// values (t-test, KS on exact values) are not available. A chi-square test of
// homogeneity works directly on the 2 x k bucket table and needs no
// assumption about the distribution's shape, which for lock waits is
// heavy-tailed and often bimodal (spin vs sleep). Sparse buckets are pooled
// with their neighbours until every expected count is >= 5, the usual
// validity rule. Shape alone misses "the same waits, 10x fewer of them", so
// the event counts get a second test: two Poisson rates compared
// conditionally on their sum (a binomial test), scaled by the capture
// durations. The two p-values are combined with Bonferroni (2 x min).
//
// With millions of events any tiny difference is "significant", and two
// runs of the same kernel differ a little; so a change is only reported as
// significant when it is also at least min_effect_pct in size.
namespace lockscope::reports {

// Result of the two-sample test on a pair of log2 histograms plus event
// counts (a compared lock's or latency row's significance).
struct Significance {
    double p_value = 1.0;        // combined (Bonferroni over the shape and rate tests)
    double shape_p = 1.0;        // chi-square homogeneity of the bucketed distributions
    double rate_p = 1.0;         // two-sample Poisson test on the event counts
    double chi_square = 0.0;
    unsigned dof = 0;            // degrees of freedom after pooling sparse buckets
    bool significant = false;    // p_value < alpha AND the effect is >= the effect floor
    bool operator==(const Significance&) const = default;
};

struct ChiSquareResult {
    double statistic = 0.0;
    unsigned dof = 0;
    double p_value = 1.0;
};

ChiSquareResult chiSquareHomogeneity(const Log2Hist& a, const Log2Hist& b);

// Two-sided p-value that counts n1 over exposure t1 and n2 over t2 come
// from the same Poisson rate.
double poissonRateTest(uint64_t n1, double t1, uint64_t n2, double t2);

// Upper regularized incomplete gamma Q(a, x); chi-square survival is Q(k/2, x/2).
double gammaQ(double a, double x);

// Both tests plus the effect floor. effect_pct is the size of the change
// that matters for the verdict (e.g. Δ% of total wait).
Significance testHistograms(const Log2Hist& before, double before_s, const Log2Hist& after, double after_s,
                            double effect_pct, double alpha, double min_effect_pct);

} // namespace lockscope::reports
