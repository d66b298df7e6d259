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

// Regularized incomplete beta function I_x(a, b), a, b > 0, 0 <= x <= 1.
double incompleteBeta(double a, double b, double x);

// Two-sided tail of Student's t distribution with df degrees of freedom:
// P(|T| >= |t|) = I_{df / (df + t^2)}(df / 2, 1 / 2).
double studentTTwoSided(double t, double df);

} // namespace lockscope::reports
