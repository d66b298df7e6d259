// SPDX-License-Identifier: GPL-2.0-or-later
#pragma once

#include <cstdio>
#include <stdexcept>
#include <string>
#include <string_view>

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

// The same for output made in pieces (render's TextSink): each piece is
// written as it comes; a file is put in place only when all of it is there.
template <class Produce>
void emitPieces(const std::string& path, Produce produce, unsigned mode = 0600)
{
    if (path.empty()) {
        produce([](std::string_view piece) {
            if (std::fwrite(piece.data(), 1, piece.size(), stdout) != piece.size())
                throw std::runtime_error("cannot write to standard output");
        });
        if (std::fflush(stdout) != 0)
            throw std::runtime_error("cannot write to standard output");
        return;
    }
    util::OutputFile out(path, mode);
    produce([&](std::string_view piece) { out.append(piece); });
    out.finish();
}

} // namespace lockscope::cli
