// SPDX-License-Identifier: GPL-2.0-or-later
#include "lockscope/util/proc_kallsyms.h"

#include <fstream>
#include <sstream>

namespace lockscope::util {

const std::string& procKallsyms()
{
    static const std::string& text = *[] {
        std::ifstream in("/proc/kallsyms");
        std::ostringstream ss;
        if (in)
            ss << in.rdbuf();
        return new std::string(ss.str());
    }();
    return text;
}

} // namespace lockscope::util
