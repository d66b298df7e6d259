// SPDX-License-Identifier: GPL-2.0-or-later
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "lockscope/capture/histogram.h"
#include "lockscope/reports/compare.h"

// Number formatting and layout shared by every renderer.
namespace lockscope::reports::fmt {

// perf-lock-contention style: "975 ns", "27.49 us", "1.95 ms", "2.00 s".
std::string duration(double ns);
// Integers without separators, fractions with 2 decimals.
std::string number(double v);
// "+12.3%", "-4.0%", "new" (from 0), "gone" (to 0), "=" (0 → 0).
std::string pct(const Delta& d);
// "+1.23 ms" / "-12" with the unit chosen by kind.
std::string signedDuration(double ns);
std::string signedNumber(double v);
// p-value in a compact form: "<0.001", "0.042".
std::string pValue(double p);
std::string percent(double fraction);  // 0.1234 → "12.34%"
std::string padLeft(const std::string& s, size_t width);
std::string padRight(const std::string& s, size_t width);
std::string truncate(const std::string& s, size_t width);
std::string htmlEscape(const std::string& s);
std::string mdEscape(const std::string& s);
// Short bucket label: "512", "1K", "2M" ... of a bucket's low bound (ns).
std::string bucketLabel(unsigned bucket);
// First and last non-empty bucket over one or two histograms (lo > hi when both are empty).
std::pair<unsigned, unsigned> bucketRange(const Log2Hist& a, const Log2Hist* b);

// The `value ---- distribution ---- count` histogram with @ bars.
std::string textHistogram(const Log2Hist& h, const std::string& indent, const char* unit = "ns");
// Before and after side by side, each bar normalized to its own side.
std::string textHistogramPair(const Log2Hist& before, const Log2Hist& after, const std::string& indent);

// Joins a path innermost first with " <- ", at most maxFrames frames.
std::string pathText(const std::vector<std::string>& outermostFirst, size_t maxFrames = 8);

// A metric value in its unit ("ns" → duration, "%" → percent figure).
std::string metricValue(double v, const std::string& unit);

} // namespace lockscope::reports::fmt
