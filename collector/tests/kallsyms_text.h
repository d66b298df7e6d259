// SPDX-License-Identifier: GPL-2.0-or-later
#pragma once

#include <cstdio>
#include <string>

#include "lockscope/record/kallsyms.h"

// kallsyms text with enough data symbols for them to count
// (KernelSymbols::kMinDataSymbols): fillers from 0xffffffff83000000 up.
inline std::string withDataSymbols(std::string text)
{
    char line[64];
    for (unsigned i = 0; i < lockscope::record::KernelSymbols::kMinDataSymbols; ++i) {
        std::snprintf(line, sizeof line, "ffffffff83%06x d filler_%u\n", i * 0x100, i);
        text += line;
    }
    return text;
}
