// SPDX-License-Identifier: GPL-2.0-or-later
#pragma once

#include <cstddef>
#include <vector>

// Statistics across repeated runs: one value per capture of a figure (a
// lock's wait/s, the workload's ops/s). Unlike the histogram tests in
// significance.h, which treat every event as an independent sample and so
// call nearly any difference significant when there are many events, these
// see what kernel maintainers distrust: the run-to-run variation of the
// whole system. The approach follows LKP (`lkp compare`: N runs per side,
// a change counts only when the ranges separate and the ratio passes a
// threshold) and mmtests (mean, stddev, CoeffVar per side), with Welch's
// t-test as the significance test because the two sides' variances differ.
namespace lockscope::reports {

// One side's spread of one figure. stddev is the sample standard deviation
// (n - 1); 0 with fewer than 2 values.
struct RunSummary {
    size_t n = 0;
    double mean = 0.0, stddev = 0.0, min = 0.0, max = 0.0;
    // Coefficient of variation in percent (stddev / |mean| * 100); 0 when the mean is 0.
    double coeffVarPct() const noexcept;
    static RunSummary of(const std::vector<double>& values);
    bool operator==(const RunSummary&) const = default;
};

// Welch's two-sample t-test (unequal variances) plus LKP's range check.
struct RunTest {
    double t = 0.0;
    double df = 0.0;           // Welch–Satterthwaite degrees of freedom
    double p_value = 1.0;      // two-sided
    bool ranges_separate = false;  // every run of one side lies beyond every run of the other
    bool operator==(const RunTest&) const = default;
};

// Needs n >= 2 on both sides (callers check). Zero variance on both sides
// gives p 1 for equal means and p 0 otherwise.
RunTest welchTest(const RunSummary& before, const RunSummary& after);

// Whether runs can decide a figure: two or more a side, or one run against
// three or more. One against two would rest on one degree of freedom (t >
// 63.7 at alpha 0.01): no verdict, as with one run a side.
bool runsCanDecide(size_t before, size_t after) noexcept;

// One run against n >= 2 of the other side: is it outside the other side's
// prediction interval? t = (after - before) / (s * sqrt(1 + 1/n)) on n - 1
// df, s the other side's standard deviation standing for both sides (a
// single run has no spread of its own). Zero spread gives p 1 for an equal
// value and p 0 otherwise.
RunTest singleRunTest(const RunSummary& before, const RunSummary& after);

// The test across runs that fits the sides' run counts (runsCanDecide):
// Welch's t, or singleRunTest when a side has one run.
RunTest runsTest(const RunSummary& before, const RunSummary& after);

// A rate comparison of event counts over runs (quasi-Poisson): each run
// counted k events over an exposure e (seconds, or operations). Under "the
// same rate" the after side's share of all events is binomial given their
// sum, with variance inflated by the dispersion phi that the runs show
// (Pearson chi-square of each run around its side's rate, over N - 2
// degrees of freedom, at least 1: never tighter than Poisson). The score z
// is referred to Student's t on N - 2 df, the quasi-likelihood convention
// for an estimated dispersion. Unlike Welch's t it needs no variance on a
// side: 0, 0, 0 against 12, 14, 9 events is evidence (a lock or figure
// present in every run of one side only).
struct RateTest {
    double z = 0.0;            // after minus before, in standard errors
    double dispersion = 1.0;   // phi
    double df = 0.0;
    double p_value = 1.0;      // two-sided
    double rate_before = 0.0, rate_after = 0.0;  // events per unit of exposure, pooled per side
    bool operator==(const RateTest&) const = default;
};

// Needs runsCanDecide (callers check): with one run on a side the dispersion
// comes from the other side's runs alone. Counts and exposures per run,
// exposures > 0.
RateTest quasiPoissonRateTest(const std::vector<double>& counts_before, const std::vector<double>& exposure_before,
                              const std::vector<double>& counts_after, const std::vector<double>& exposure_after);

// t such that P(|T| >= t) = p_two_sided with df degrees of freedom (0 < p < 1).
double studentTQuantile(double p_two_sided, double df);

// Runs per side at which a two-sided test at alpha detects a difference
// delta between the sides' means with the given power, when one run of each
// side varies by var_before and var_after (normal theory with Student's t
// quantiles on 2n - 2 df). 0 when even max_runs would not do it.
size_t runsToDecide(double var_before, double var_after, double delta, double alpha, double power = 0.8,
                    size_t max_runs = 50);

// Regularized incomplete beta function I_x(a, b), a, b > 0, 0 <= x <= 1.
double incompleteBeta(double a, double b, double x);

// Two-sided tail of Student's t distribution with df degrees of freedom:
// P(|T| >= |t|) = I_{df / (df + t^2)}(df / 2, 1 / 2).
double studentTTwoSided(double t, double df);

} // namespace lockscope::reports
