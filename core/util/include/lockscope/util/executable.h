// SPDX-License-Identifier: GPL-2.0-or-later
#pragma once

#include <string>

namespace lockscope::util {

// What execvp would run for name: name itself when it holds a '/', else the
// first PATH entry (an empty one is ".") holding a regular file we may
// execute; "" when there is none. Checked up front so that a typo fails
// before any work (a recording's probes, a lab's boot) is started.
std::string findExecutable(const std::string& name);

} // namespace lockscope::util
