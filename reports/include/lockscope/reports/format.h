// SPDX-License-Identifier: GPL-2.0-or-later
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "lockscope/capture/units.h"
#include "lockscope/reports/compare.h"

// How lockscope writes a figure, for every front end: the reports'
// renderers, the CLI and the GUI. The rules (units, decimals, what a change
// from zero says) live here once; a Style only sets the typography, so the
// GUI can use narrow spaces and a real minus sign where a report stays ASCII.
namespace lockscope::reports::fmt {

struct Style {
    std::string_view thousands; // between digit groups of whole numbers ("" none)
    std::string_view minus;     // the sign of a negative figure
    std::string_view pct_gap;   // between a number and its "%"
    std::string_view name_gap;  // between a lock's key and its [name]
    std::string_view none;      // a figure that cannot be computed
};
// Reports, terminals and files: ASCII, no digit groups.
inline constexpr Style kPlain{"", "-", "", " ", "-"};
// On screen: U+202F between digit groups, U+2212 for minus, "12.3 %".
inline constexpr Style kDisplay{"\u202f", "\u2212", " ", "  ", "\u2013"};

// "975 ns", "27.49 us", "1.95 ms", "2.00 s": capture's one style.
using units::duration;
// v with `decimals` decimals ("%.*f"), its sign and digit groups as s says.
std::string fixed(double v, int decimals, const Style& s = kPlain);
// Whole numbers without decimals, fractions with 2.
std::string number(double v, const Style& s = kPlain);
// "775,912": a count with thousands separators.
std::string grouped(uint64_t v, std::string_view separator = ",");
// v with `digits` significant digits ("%.*g"): "0.042", "1.2e-05".
std::string significant(double v, int digits, const Style& s = kPlain);
// 0.1234 → "12.34%" (decimals 2); s.none when not finite.
std::string percent(double fraction, int decimals = 2, const Style& s = kPlain);
// What cpu.lock_samples / cpu.samples and cpu.bpf_samples / cpu.samples are
// called wherever they are shown.
inline constexpr const char* kCpuLockLabel = "CPU in lock functions";
inline constexpr const char* kCpuBpfLabel = "CPU in BPF (lockscope's too)";
// Display name of a comparison's figure: cpu_lock_share → "CPU in lock
// functions"; names without one (workload results, leaf functions) as they are.
std::string figureName(const std::string& name);
// A figure already in percent: 12.345 → "12.35%" (decimals 2).
std::string percentValue(double pct, int decimals = 2, const Style& s = kPlain);
// A change of a figure: "+12.3%", "-4.0%", "new" (from 0), "gone" (to 0), "=" (0 → 0).
std::string pct(const Delta& d, const Style& s = kPlain);
// "+1.23 ms" / "-12" with the unit chosen by kind.
std::string signedDuration(double ns);
std::string signedNumber(double v);
// p-value in a compact form: "<0.001", "0.042".
std::string pValue(double p);
// A figure's value in its unit: "ns" durations, "ns/s" durations per second,
// "ns/op" per operation, "/s" rates, "/op" and "/1k ops" ratios, "%"
// percentages, else a plain number followed by the unit.
std::string figureValue(double v, const std::string& unit, const Style& s = kPlain);
// LKP's %stddev column: "±2.3%" (coefficient of variation) with n >= 2, "" otherwise.
std::string spread(const RunSummary& r, const Style& s = kPlain);
// Δ% of the means, or "+1.23 pp" for percentages; "new", "gone", "=".
std::string change(const MetricDelta& m, const Style& s = kPlain);
// One side of a figure with its spread: "1.25 ms ±3.1%", the value alone with one run.
std::string sideWithSpread(const MetricDelta& m, bool after, const Style& s = kPlain);
// A lock as a person reads it: its key, with the name beside it when the
// name says more than the key (Lock::nameBesideKey): "rwsem@f [mmap_lock]".
std::string lockLabel(const std::string& key, const std::string& name, const Style& s = kPlain);

} // namespace lockscope::reports::fmt
