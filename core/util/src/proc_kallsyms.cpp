// SPDX-License-Identifier: GPL-2.0-or-later
#include "lockscope/util/proc_kallsyms.h"

#include "lockscope/util/file_text.h"

namespace lockscope::util {

const std::string& procKallsyms()
{
    static const std::string& text = *new std::string(readTextFile("/proc/kallsyms"));
    return text;
}

} // namespace lockscope::util
