// SPDX-License-Identifier: GPL-2.0-or-later
#pragma once

#include <string>

namespace lockscope::util {

// /proc/kallsyms as text, read once per process (the kernel takes ~0.1 s to
// generate its 10^5 lines) and never freed; "" when it cannot be read. The
// probes (functions missing from BTF) and record (symbolizing stacks) both
// need it at start-up.
const std::string& procKallsyms();

} // namespace lockscope::util
