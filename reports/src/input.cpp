// SPDX-License-Identifier: GPL-2.0-or-later
#include "lockscope/reports/input.h"

#include <fstream>
#include <optional>
#include <regex>
#include <sys/stat.h>

#include "lockscope/capture/io.h"

namespace lockscope::reports {

namespace {
// The "version" of a capture file from its first few KiB, without a full parse.
std::optional<long> peekVersion(const std::string& path)
{
    std::ifstream in(path, std::ios::binary);
    std::string head(8192, '\0');
    in.read(head.data(), std::streamsize(head.size()));
    head.resize(size_t(in.gcount()));
    static const std::regex re(R"re("version"\s*:\s*(-?[0-9]+))re");
    std::smatch m;
    if (!std::regex_search(head, m, re))
        return std::nullopt;
    try {
        return std::stol(m[1].str());
    } catch (const std::exception&) {
        return std::nullopt;
    }
}
} // namespace

Capture loadCapture(const std::string& path)
{
    struct stat st {};
    if (::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode) && st.st_size == 0)
        throw CaptureError(path + ": the file is empty; expected a capture written by `lockscope record` or "
                                  "`lockscope import`");
    return readCapture(path);
}

std::pair<Capture, Capture> loadPair(const std::string& before, const std::string& after)
{
    try {
        Capture b = loadCapture(before);
        Capture a = loadCapture(after);
        return {std::move(b), std::move(a)};
    } catch (const CaptureError&) {
        const auto vb = peekVersion(before), va = peekVersion(after);
        if (vb && va && *vb != *va)
            throw CaptureError(before + " is capture format version " + std::to_string(*vb) + " but " + after +
                               " is version " + std::to_string(*va) +
                               "; compare captures written by the same lockscope version (this one reads version " +
                               std::to_string(kCaptureVersion) + ")");
        throw;
    }
}

} // namespace lockscope::reports
