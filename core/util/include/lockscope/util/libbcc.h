// SPDX-License-Identifier: GPL-2.0-or-later
#pragma once

namespace lockscope::util {

// The library record opens to symbolize user stacks (record::UserSymbols),
// and that the lab puts into its guests when a recording needs user stacks.
inline constexpr const char* kLibbccSoname = "libbcc.so.0";

} // namespace lockscope::util
