// SPDX-License-Identifier: GPL-2.0-or-later
#include "lockscope/reports/input.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <optional>
#include <regex>
#include <sys/stat.h>

#include "lockscope/capture/io.h"
#include "lockscope/capture/lock_frames.h"

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
    // Older captures kept BPF trampoline frames in their lock stacks.
    Capture c = readCapture(path);
    dropBpfFrames(c);
    return c;
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

std::vector<std::string> expandCaptureArgs(const std::vector<std::string>& args)
{
    namespace fs = std::filesystem;
    std::vector<std::string> out;
    for (const auto& arg : args) {
        std::error_code ec;
        if (!fs::is_directory(arg, ec)) {
            out.push_back(arg);
            continue;
        }
        std::vector<std::string> inDir;
        for (const auto& e : fs::directory_iterator(arg, ec)) {
            const std::string name = e.path().filename().string();
            const std::string suffix = ".lockscope.json";
            if (e.is_regular_file(ec) && name.size() > suffix.size() &&
                name.compare(name.size() - suffix.size(), suffix.size(), suffix) == 0)
                inDir.push_back(e.path().string());
        }
        if (ec)
            throw CaptureError(arg + ": cannot read the directory: " + ec.message());
        if (inDir.empty())
            throw CaptureError(arg + ": the directory holds no *.lockscope.json captures");
        std::sort(inDir.begin(), inDir.end());
        out.insert(out.end(), inDir.begin(), inDir.end());
    }
    return out;
}

std::pair<std::vector<Capture>, std::vector<Capture>> loadSets(const std::vector<std::string>& before,
                                                               const std::vector<std::string>& after)
{
    std::vector<Capture> b, a;
    auto load = [&](const std::string& path, std::vector<Capture>& into) {
        try {
            into.push_back(loadCapture(path));
        } catch (const CaptureError&) {
            // Name a version mismatch against the first file of the comparison.
            const std::string& first = before.front();
            if (first != path)
                (void)loadPair(first, path);
            throw;
        }
    };
    for (const auto& p : before)
        load(p, b);
    for (const auto& p : after)
        load(p, a);
    return {std::move(b), std::move(a)};
}

} // namespace lockscope::reports
