// SPDX-License-Identifier: GPL-2.0-or-later
// dpath-stress: reader threads resolving paths (getcwd(), which walks the
// dentry chain under the rename_lock seqlock) while renamer threads keep
// renaming directories (rename() takes rename_lock for writing). Readers that
// keep failing the seqlock retry fall back to taking the lock: the benchmark of
// "seqlock: use rwlock for blocking readers".

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <string>
#include <thread>
#include <vector>

#include "common/workload.h"

using namespace lockscope::workload;

namespace {

struct alignas(64) Counter {
    uint64_t ops = 0;
    int error = 0;
};

// A private directory tree, removed on destruction (also after SIGINT/SIGTERM,
// which StopControl turns into a normal return). The chain is built and left
// as the working directory one level at a time, with one-letter names, so
// that a chain of 2000 stays within PATH_MAX for getcwd() while no path
// handed to mkdir or rmdir is long.
class Tree {
public:
    Tree(const std::string& program, int64_t depth, int64_t renamers) : program_(program)
    {
        char tmpl[] = "/tmp/lockscope-dpath-XXXXXX";
        if (!mkdtemp(tmpl))
            die(program_, "mkdtemp(/tmp/lockscope-dpath-XXXXXX)");
        root_ = tmpl;
        for (int64_t r = 0; r < renamers; ++r) {
            make(root_ + "/r" + std::to_string(r));
            make(root_ + "/r" + std::to_string(r) + "/a");
        }
        renamers_ = renamers;
        if (chdir(root_.c_str()) < 0)
            die(program_, "chdir " + root_);
        for (; depth_ < depth; ++depth_) {
            make("d");
            if (chdir("d") < 0)
                die(program_, "chdir into level " + std::to_string(depth_ + 1));
        }
    }
    ~Tree()
    {
        for (; depth_ > 0; --depth_)
            if (chdir("..") < 0 || rmdir("d") < 0) {
                std::perror("removing the directory chain");
                break;
            }
        if (chdir("/") < 0)
            std::perror("chdir /");
        for (int64_t r = 0; r < renamers_; ++r) {
            std::string d = root_ + "/r" + std::to_string(r);
            rmdir((d + "/a").c_str());
            rmdir((d + "/b").c_str());
            rmdir(d.c_str());
        }
        rmdir(root_.c_str());
    }
    std::string renameDir(int64_t r) const { return root_ + "/r" + std::to_string(r); }

private:
    void make(const std::string& path)
    {
        if (mkdir(path.c_str(), 0700) < 0)
            die(program_, "mkdir " + path);
    }
    std::string program_, root_;
    int64_t depth_ = 0, renamers_ = 0;
};

void reader(const StopControl& stop, Counter& c, size_t expectedLength)
{
    char buf[PATH_MAX];
    while (!stop.stopping()) {
        if (!getcwd(buf, sizeof buf) || std::char_traits<char>::length(buf) != expectedLength) {
            c.error = errno ? errno : EIO;
            return;
        }
        ++c.ops;
    }
}

// pause > 0 makes renames rare: each is then a lone trigger whose effect on
// the readers (one failed lockless pass, or a cascade of them) can be told
// apart from the renames themselves.
void renamer(const StopControl& stop, Counter& c, const std::string& dir, std::chrono::microseconds pause)
{
    std::string a = dir + "/a", b = dir + "/b";
    while (!stop.stopping()) {
        if (rename(a.c_str(), b.c_str()) < 0 || rename(b.c_str(), a.c_str()) < 0) {
            c.error = errno;
            return;
        }
        c.ops += 2;
        if (pause.count() > 0)
            std::this_thread::sleep_for(pause);
    }
}

} // namespace

int main(int argc, char** argv)
{
    int64_t readers = 4, renamers = 2, depth = 16;
    double duration = 5.0, pauseMs = 0;
    Flags flags("dpath-stress",
                "Reader threads calling getcwd() in a deep directory while renamer threads rename\n"
                "directories: contention on the rename_lock seqlock of the dentry cache.");
    flags.addInt("readers", &readers, 1, 4096, "getcwd() threads");
    flags.addInt("renamers", &renamers, 0, 4096, "rename() threads");
    flags.addInt("depth", &depth, 1, 2000, "depth of the working directory below the temp root");
    flags.addDouble("rename-pause", &pauseMs, 0, 60000, "milliseconds each renamer sleeps after a rename pair");
    flags.addDouble("duration", &duration, 0.01, 86400, "seconds to run");
    flags.parse(argc, argv);

    StopControl stop;
    Tree tree(flags.program(), depth, renamers); // leaves us at the deepest level
    char resolved[PATH_MAX];
    if (!getcwd(resolved, sizeof resolved))
        die(flags.program(), "getcwd");
    const size_t expectedLength = std::char_traits<char>::length(resolved);

    std::vector<Counter> readCounts(static_cast<size_t>(readers)), renameCounts(static_cast<size_t>(renamers));
    std::vector<std::thread> pool;
    pool.reserve(static_cast<size_t>(readers + renamers));
    auto start = Clock::now();
    for (auto& c : readCounts)
        pool.emplace_back(reader, std::cref(stop), std::ref(c), expectedLength);
    for (int64_t r = 0; r < renamers; ++r)
        pool.emplace_back(renamer, std::cref(stop), std::ref(renameCounts[static_cast<size_t>(r)]),
                          tree.renameDir(r),
                          std::chrono::microseconds(static_cast<int64_t>(pauseMs * 1000)));
    bool interrupted = stop.waitForStop(duration);
    for (auto& t : pool)
        t.join();
    double elapsed = secondsSince(start);

    uint64_t reads = 0, renames = 0;
    for (const auto& c : readCounts) {
        if (c.error) {
            errno = c.error;
            die(flags.program(), "getcwd");
        }
        reads += c.ops;
    }
    for (const auto& c : renameCounts) {
        if (c.error) {
            errno = c.error;
            die(flags.program(), "rename");
        }
        renames += c.ops;
    }
    double rate = static_cast<double>(reads) / elapsed;
    printTable({{"readers", "renamers", "depth", "getcwd calls", "renames", "seconds", "getcwd/s", "renames/s"},
                {std::to_string(readers), std::to_string(renamers), std::to_string(depth), std::to_string(reads),
                 std::to_string(renames), formatNumber(elapsed, 2), formatNumber(rate),
                 formatNumber(static_cast<double>(renames) / elapsed)}});
    printResult({{"benchmark", "dpath-stress"},
                 {"ops", reads},
                 {"ops_per_sec", rate},
                 {"renames", renames},
                 {"renames_per_sec", static_cast<double>(renames) / elapsed},
                 {"readers", readers},
                 {"renamers", renamers},
                 {"threads", readers + renamers},
                 {"depth", depth},
                 {"duration_s", elapsed},
                 {"interrupted", interrupted}});
    return 0;
}
