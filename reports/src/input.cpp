// SPDX-License-Identifier: GPL-2.0-or-later
#include "lockscope/reports/input.h"

#include <algorithm>
#include <atomic>
#include <exception>
#include <filesystem>
#include <iterator>
#include <optional>
#include <sys/stat.h>
#include <thread>

#include "lockscope/capture/io.h"
#include "lockscope/capture/lock_frames.h"

namespace lockscope::reports {

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
    auto [b, a] = loadSets({before}, {after});
    return {std::move(b.front()), std::move(a.front())};
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
            const bool capture = name.ends_with(".lockscope.json") || name.ends_with(".lockscope.json.zst");
            if (e.is_regular_file(ec) && capture && name.size() > std::string_view(".lockscope.json").size())
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

namespace {

// The capture format version a file was found to hold, as readCapture said.
struct FoundVersion {
    std::string path;
    std::string version;
};

// The versions this lockscope reads, as a read file's version reads in a
// message (readCapture does not say which of them a good file held).
std::string readableVersions()
{
    return std::to_string(kCaptureVersion) + " or " + std::to_string(kCaptureVersionNewest);
}

// One line for two files of one comparison in different format versions.
CaptureError versionMismatch(const FoundVersion& first, const FoundVersion& second)
{
    return CaptureError(first.path + " is capture format version " + first.version + " but " + second.path +
                        " is version " + second.version +
                        "; compare captures written by the same lockscope version (this one reads versions " +
                        readableVersions() + ")");
}

// One file of a run set: its capture, or why it could not be read.
struct Loaded {
    std::optional<Capture> capture;
    std::exception_ptr error;
};

// Reads every file, on as many threads as there are CPUs (at most one per
// file). Each thread holds one file's text at a time, so memory is the
// models plus a file per CPU, not the sum of the files.
std::vector<Loaded> loadAll(const std::vector<std::string>& paths)
{
    std::vector<Loaded> out(paths.size());
    std::atomic<size_t> next{0};
    const auto work = [&] {
        for (size_t i = next++; i < paths.size(); i = next++) {
            try {
                out[i].capture = loadCapture(paths[i]);
            } catch (...) {
                out[i].error = std::current_exception();
            }
        }
    };
    const size_t threads = std::min<size_t>(std::max(1u, std::thread::hardware_concurrency()), paths.size());
    std::vector<std::jthread> pool;
    for (size_t t = 1; t < threads; ++t)
        pool.emplace_back(work);
    work();
    return out;
}

// After the file at index i (the first that failed) was refused for its
// version: the first file of the comparison in another version. Files
// before i hold this lockscope's version; later ones answer from what was read.
std::optional<FoundVersion> otherVersion(const std::vector<std::string>& paths, const std::vector<Loaded>& loaded,
                                         size_t i, const CaptureVersionError& failed)
{
    const std::string ours = readableVersions();
    if (i > 0)
        return FoundVersion{paths.front(), ours};
    for (size_t j = i + 1; j < paths.size(); ++j) {
        if (loaded[j].capture)
            return FoundVersion{paths[j], ours};
        try {
            std::rethrow_exception(loaded[j].error);
        } catch (const CaptureVersionError& e) {
            if (e.isCapture() && e.found_version != failed.found_version)
                return FoundVersion{paths[j], e.found_version};
        } catch (...) {
            // Says nothing about versions: the first file's own error stands.
        }
    }
    return std::nullopt;
}

// The first failure in argument order, as reading them one by one would have thrown it.
[[noreturn]] void throwFirstError(const std::vector<std::string>& paths, const std::vector<Loaded>& loaded, size_t i)
{
    try {
        std::rethrow_exception(loaded[i].error);
    } catch (const CaptureVersionError& e) {
        if (!e.isCapture())
            throw;
        const auto other = otherVersion(paths, loaded, i, e);
        if (!other)
            throw;
        const FoundVersion self{paths[i], e.found_version};
        throw i > 0 ? versionMismatch(*other, self) : versionMismatch(self, *other);
    }
}

} // namespace

std::pair<std::vector<Capture>, std::vector<Capture>> loadSets(const std::vector<std::string>& before,
                                                               const std::vector<std::string>& after)
{
    std::vector<std::string> paths = before;
    paths.insert(paths.end(), after.begin(), after.end());
    std::vector<Loaded> all = loadAll(paths);
    std::vector<Capture> loaded;
    loaded.reserve(paths.size());
    for (size_t i = 0; i < paths.size(); ++i) {
        if (!all[i].capture)
            throwFirstError(paths, all, i);
        loaded.push_back(std::move(*all[i].capture));
        all[i].capture.reset();
    }
    std::vector<Capture> a(std::make_move_iterator(loaded.begin() + std::ptrdiff_t(before.size())),
                           std::make_move_iterator(loaded.end()));
    loaded.resize(before.size());
    return {std::move(loaded), std::move(a)};
}

} // namespace lockscope::reports
