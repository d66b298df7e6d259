// SPDX-License-Identifier: GPL-2.0-or-later
#include "lockscope/reports/input.h"

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <deque>
#include <exception>
#include <filesystem>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <sys/stat.h>
#include <thread>

#include "compare_internal.h"
#include "lock_alignment.h"

#include "lockscope/capture/io.h"
#include "lockscope/capture/lock_frames.h"
#include "lockscope/util/huge_page_heap.h"

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

size_t readerThreads(size_t files)
{
    return std::min<size_t>(std::max(1u, std::thread::hardware_concurrency()), files);
}

// Reads every file, on as many threads as there are CPUs (at most one per
// file), and hands each capture to `done` on the thread that read it, with
// its index, or nullopt when it could not be read: the returned errors say
// why (null for files read). Each thread holds one file's text at a time.
using Done = std::function<void(size_t, std::optional<Capture>)>;
std::vector<std::exception_ptr> readAll(const std::vector<std::string>& paths, const Done& done)
{
    const WholeHeapGrowth growth; // huge pages for the models the reader threads make
    std::vector<std::exception_ptr> errors(paths.size());
    std::atomic<size_t> next{0};
    const auto work = [&] {
        for (size_t i = next++; i < paths.size(); i = next++) {
            std::optional<Capture> c;
            try {
                c = loadCapture(paths[i]);
            } catch (...) {
                errors[i] = std::current_exception();
            }
            done(i, std::move(c));
        }
    };
    std::vector<std::jthread> pool;
    for (size_t t = 1; t < readerThreads(paths.size()); ++t)
        pool.emplace_back(work);
    work();
    return errors;
}

// After the file at index i (the first that failed) was refused for its
// version: the first file of the comparison in another version. Files
// before i hold this lockscope's version; later ones answer from what was read.
std::optional<FoundVersion> otherVersion(const std::vector<std::string>& paths,
                                         const std::vector<std::exception_ptr>& errors, size_t i,
                                         const CaptureVersionError& failed)
{
    const std::string ours = readableVersions();
    if (i > 0)
        return FoundVersion{paths.front(), ours};
    for (size_t j = i + 1; j < paths.size(); ++j) {
        if (!errors[j])
            return FoundVersion{paths[j], ours};
        try {
            std::rethrow_exception(errors[j]);
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
[[noreturn]] void throwError(const std::vector<std::string>& paths, const std::vector<std::exception_ptr>& errors,
                             size_t i)
{
    try {
        std::rethrow_exception(errors[i]);
    } catch (const CaptureVersionError& e) {
        if (!e.isCapture())
            throw;
        const auto other = otherVersion(paths, errors, i, e);
        if (!other)
            throw;
        const FoundVersion self{paths[i], e.found_version};
        throw i > 0 ? versionMismatch(*other, self) : versionMismatch(self, *other);
    }
}

void throwFirstError(const std::vector<std::string>& paths, const std::vector<std::exception_ptr>& errors)
{
    for (size_t i = 0; i < errors.size(); ++i)
        if (errors[i])
            throwError(paths, errors, i);
}

std::vector<std::string> joined(const std::vector<std::string>& before, const std::vector<std::string>& after)
{
    std::vector<std::string> paths = before;
    paths.insert(paths.end(), after.begin(), after.end());
    return paths;
}

// A run as the fold takes it: the capture (none when it failed to read) and
// its locks' walked callers, worked out on the thread that read it.
struct ReadRun {
    std::optional<Capture> capture;
    detail::RunCallers callers;
};

// Hands runs read out of order to `fold` in argument order (pools must see
// runs in order). A reader ahead of the fold waits while `limit` runs wait
// already, so memory holds a few captures, not the files.
class InOrder {
public:
    using Fold = std::function<void(size_t, ReadRun)>;
    InOrder(size_t limit, Fold fold) : limit_(limit), fold_(std::move(fold)) {}

    void put(size_t i, ReadRun r)
    {
        std::unique_lock lock(mutex_);
        ready_.wait(lock, [&] { return i == next_ || waiting_.size() < limit_; });
        waiting_.emplace(i, std::move(r));
        while (!waiting_.empty() && waiting_.begin()->first == next_) {
            auto node = waiting_.extract(waiting_.begin());
            fold_(next_++, std::move(node.mapped()));
        }
        ready_.notify_all();
    }

private:
    size_t limit_;
    Fold fold_;
    std::mutex mutex_;
    std::condition_variable ready_;
    size_t next_ = 0;
    std::map<size_t, ReadRun> waiting_;
};

// One side's runs as they arrive: a side of one run is that run, whole (as
// compareSets uses it); from the second on, every run's stacks and sites
// go into the pool and the run keeps its per-run figures.
class SideFold {
public:
    void add(Capture run)
    {
        runs_.push_back(std::move(run));
        if (runs_.size() == 2)
            pool_.take(runs_.front());
        if (runs_.size() >= 2)
            pool_.take(runs_.back());
    }
    std::vector<const Capture*> runs() const
    {
        std::vector<const Capture*> out;
        for (const Capture& r : runs_)
            out.push_back(&r);
        return out;
    }
    // The pool, once every run was added.
    detail::PoolBuilder::Pool finish()
    {
        return runs_.size() > 1 ? pool_.finish() : detail::PoolBuilder::Pool::ofOneRun(runs_.front());
    }
    // The side the comparison reads, whose stacks (the pool's, or the one
    // run's) it may free: nothing reads them after it.
    detail::PooledSide side(detail::PoolBuilder::Pool& pool, const std::vector<const Capture*>& runs)
    {
        detail::PooledSide s = detail::pooledSide(pool, runs);
        s.spent_stacks = &s.capture == &pool.capture ? &pool.capture.stacks : &runs_.front().stacks;
        return s;
    }

private:
    std::deque<Capture> runs_;
    detail::PoolBuilder pool_;
};

} // namespace

std::pair<std::vector<Capture>, std::vector<Capture>> loadSets(const std::vector<std::string>& before,
                                                               const std::vector<std::string>& after)
{
    const std::vector<std::string> paths = joined(before, after);
    std::vector<std::optional<Capture>> all(paths.size());
    throwFirstError(paths, readAll(paths, [&](size_t i, std::optional<Capture> c) { all[i] = std::move(c); }));
    std::pair<std::vector<Capture>, std::vector<Capture>> sets;
    for (size_t i = 0; i < paths.size(); ++i) {
        (i < before.size() ? sets.first : sets.second).push_back(std::move(*all[i]));
        all[i].reset();
    }
    return sets;
}

Comparison compareSetFiles(const std::vector<std::string>& before, const std::vector<std::string>& after,
                           const CompareOptions& options)
{
    detail::requireBothSides(before.size(), after.size());
    const std::vector<std::string> paths = joined(before, after);
    SideFold sides[2];
    detail::LockAligner aligner; // before the fold, which moves the stacks out
    InOrder inOrder(readerThreads(paths.size()), [&](size_t i, ReadRun r) {
        if (!r.capture)
            return;
        const bool patchedRun = i >= before.size();
        aligner.align(*r.capture, r.callers, patchedRun ? detail::RunSide::After : detail::RunSide::Before);
        sides[patchedRun ? 1 : 0].add(std::move(*r.capture));
    });
    throwFirstError(paths, readAll(paths, [&](size_t i, std::optional<Capture> c) {
        detail::RunCallers callers = c ? detail::walkedCallers(*c) : detail::RunCallers();
        inOrder.put(i, ReadRun{std::move(c), std::move(callers)});
    }));
    aligner.forgetRuns();
    const auto base = sides[0].runs(), patched = sides[1].runs();
    auto poolB = sides[0].finish(), poolA = sides[1].finish();
    Comparison c = detail::comparePools(sides[0].side(poolB, base), base, sides[1].side(poolA, patched), patched,
                                        options);
    aligner.annotate(c);
    return c;
}

} // namespace lockscope::reports
