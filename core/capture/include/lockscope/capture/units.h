// SPDX-License-Identifier: GPL-2.0-or-later
#pragma once

#include <string>

// How times read, the one style for the CLI, every report format and the
// GUI, so a figure is written the same wherever it is shown: perf lock
// contention's units, in ASCII ("us"), with a space before the unit.
namespace lockscope::units {

// "975 ns", "27.49 us", "1.95 ms", "2.00 s", "2.50 m", "1.20 h"; a negative
// time keeps its sign.
std::string duration(double ns);

// A log2 histogram bucket by its lower bound, as a time with three
// significant digits (axis labels): "512 ns", "1.02 us", "16.4 us", "131 us".
std::string bucketLabel(unsigned bucket);

} // namespace lockscope::units
