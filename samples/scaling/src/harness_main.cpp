// SPDX-License-Identifier: GPL-2.0-or-later
// lockscope-scaling: runs every before/after pair over 1, 2, 4, ... threads
// and writes the scaling JSON (docs/scaling-format.md).

#include <sys/utsname.h>
#include <unistd.h>

#include <cstdio>
#include <ctime>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include "common/workload.h"
#include "lockscope/scaling/runner.h"
#include "lockscope/scaling_format/scaling_io.h"

using namespace lockscope;
using namespace lockscope::scaling;

namespace {

std::string cpuModel()
{
    std::ifstream in("/proc/cpuinfo");
    std::string line;
    while (std::getline(in, line))
        if (line.rfind("model name", 0) == 0)
            if (auto colon = line.find(':'); colon != std::string::npos)
                return line.substr(line.find_first_not_of(' ', colon + 1));
    return "unknown";
}

std::string utcNow()
{
    std::time_t now = std::time(nullptr);
    std::tm tm{};
    gmtime_r(&now, &tm);
    char buf[32];
    std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
    return buf;
}

std::vector<std::string> splitComma(const std::string& s)
{
    std::vector<std::string> out;
    std::stringstream in(s);
    std::string item;
    while (std::getline(in, item, ','))
        out.push_back(item);
    return out;
}

// The pairs --pairs names ("all": every one).
std::vector<const PairInfo*> selectPairs(const workload::Flags& flags, const std::string& only)
{
    std::vector<const PairInfo*> selected;
    if (only == "all") {
        for (const auto& p : pairs())
            selected.push_back(&p);
        return selected;
    }
    for (const auto& id : splitComma(only)) {
        const PairInfo* p = findPair(id);
        if (!p) {
            std::string known;
            for (const auto& q : pairs())
                known += (known.empty() ? "" : ", ") + q.id;
            flags.usageError("--pairs: unknown pair '" + id + "' (known: " + known + ")");
        }
        selected.push_back(p);
    }
    return selected;
}

// 1, 2, 4, ... below max, then max.
std::vector<unsigned> threadCounts(int64_t max)
{
    std::vector<unsigned> counts;
    for (int64_t t = 1; t < max; t *= 2)
        counts.push_back(static_cast<unsigned>(t));
    counts.push_back(static_cast<unsigned>(max));
    return counts;
}

struct PointSpec {
    double duration = 0.5;
    int64_t opsPerThread = 0; // 0: by duration
    bool profile = true;
};

// A reference implementation that broke its own invariant: its numbers mean nothing.
struct InvariantBroken : std::runtime_error {
    using std::runtime_error::runtime_error;
};

ScalingPoint measurePoint(const PairInfo& info, Variant v, unsigned threads, const PointSpec& spec)
{
    PointResult r = spec.opsPerThread
        ? runOps(info, v, threads, static_cast<uint64_t>(spec.opsPerThread), spec.profile)
        : runPoint(info, v, threads, spec.duration, spec.profile);
    if (!r.violation.empty())
        throw InvariantBroken(info.id + "/" + variantName(v) + " with " + std::to_string(threads) +
                              " threads broke an invariant: " + r.violation);
    ScalingPoint point{threads, r.ops, r.duration_s, r.opsPerSec(), {}};
    for (auto& l : r.locks)
        point.locks.push_back({l.name, l.type, l.wait, l.hold});
    return point;
}

// Points measured so far out of all of them, one stderr line each: a
// front end (the GUI's "Measure on this machine") shows it as progress.
struct Progress {
    size_t done = 0, total = 0;
    void point(const PairInfo& info, Variant v, unsigned threads)
    {
        std::fprintf(stderr, "lockscope-scaling: point %zu/%zu: %s %s, %u threads\n", ++done, total, info.id.c_str(),
                     variantName(v), threads);
    }
};

ScalingPair measurePair(const PairInfo& info, const std::vector<unsigned>& counts, const PointSpec& spec,
                        Progress& progress)
{
    ScalingPair pair{info.id, info.title, info.kernelChange, info.workload, {}};
    for (Variant v : {Variant::Before, Variant::After})
        pair.variants.push_back({variantName(v), v == Variant::Before ? info.before : info.after, {}});
    // Before and after alternate at each thread count, and which of them
    // goes first alternates too, so that drift in the machine's load
    // (shared CI hosts) and first-run effects hit both variants alike.
    bool afterFirst = false;
    for (unsigned t : counts) {
        const Variant order[2] = {afterFirst ? Variant::After : Variant::Before,
                                  afterFirst ? Variant::Before : Variant::After};
        afterFirst = !afterFirst;
        for (Variant v : order) {
            pair.variants[v == Variant::Before ? 0 : 1].points.push_back(measurePoint(info, v, t, spec));
            progress.point(info, v, t);
        }
    }
    return pair;
}

} // namespace

int main(int argc, char** argv)
{
    const auto cpus = static_cast<int64_t>(sysconf(_SC_NPROCESSORS_ONLN));
    int64_t maxThreads = 2 * cpus;
    PointSpec spec;
    std::string output = "scaling.json", only = "all";
    bool noProfile = false;
    workload::Flags flags("lockscope-scaling",
                          "Runs the before/after reference implementations of the five kernel lock-scaling\n"
                          "changes over 1, 2, 4, ... threads and writes a scaling JSON file.");
    flags.addInt("max-threads", &maxThreads, 1, 1024, "largest thread count (powers of two, plus this one)");
    flags.addDouble("duration", &spec.duration, 0.01, 3600, "seconds per point");
    flags.addInt("ops", &spec.opsPerThread, 0, int64_t{1} << 40,
                 "operations per thread per point instead of --duration (0: by duration)");
    flags.addString("pairs", &only, "comma-separated pair ids, or 'all'");
    flags.addString("output", &output, "file to write");
    flags.addSwitch("no-profile", &noProfile, "skip the lock wait/hold histograms (bare locks)");
    flags.parse(argc, argv);
    spec.profile = !noProfile;

    const std::vector<const PairInfo*> selected = selectPairs(flags, only);
    const std::vector<unsigned> counts = threadCounts(maxThreads);
    ScalingRun run;
    utsname u{};
    uname(&u);
    char host[256] = {};
    gethostname(host, sizeof host - 1);
    run.meta = {LOCKSCOPE_VERSION, utcNow(), host, u.release, cpuModel(), static_cast<unsigned>(cpus),
                spec.duration, counts, std::vector<std::string>(argv, argv + argc)};

    std::vector<std::vector<std::string>> table{{"pair", "threads", "before ops/s", "after ops/s", "after/before"}};
    Progress progress{0, selected.size() * counts.size() * 2};
    try {
        for (const PairInfo* info : selected) {
            ScalingPair pair = measurePair(*info, counts, spec, progress);
            for (unsigned t : counts)
                table.push_back({info->id, std::to_string(t),
                                 workload::formatNumber(pair.variants[0].at(t)->ops_per_sec),
                                 workload::formatNumber(pair.variants[1].at(t)->ops_per_sec),
                                 workload::formatNumber(pair.speedup(t).value_or(0), 2)});
            run.pairs.push_back(std::move(pair));
        }
        workload::printTable(table);
        writeScaling(run, output);
    } catch (const InvariantBroken& e) {
        std::fprintf(stderr, "lockscope-scaling: %s\n", e.what());
        return 1;
    } catch (const ScalingError& e) {
        std::fprintf(stderr, "lockscope-scaling: %s\n", e.what());
        return 1;
    }
    std::printf("wrote %s\n", output.c_str());
    return 0;
}
