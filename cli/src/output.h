// SPDX-License-Identifier: GPL-2.0-or-later
#pragma once

#include <cstdio>
#include <stdexcept>
#include <string>

#include "lockscope/util/output_file.h"

namespace lockscope::cli {

// Writes text through util::OutputFile (0600: exports and reports name kernel
// addresses), or to stdout when path is empty.
inline void emit(const std::string& text, const std::string& path, unsigned mode = 0600)
{
    if (!path.empty()) {
        util::writeFileAtomic(path, text, mode);
        return;
    }
    if (std::fwrite(text.data(), 1, text.size(), stdout) != text.size() || std::fflush(stdout) != 0)
        throw std::runtime_error("cannot write to standard output");
}

} // namespace lockscope::cli
