// SPDX-License-Identifier: GPL-2.0-or-later
// lockscope-scaling: runs every before/after pair over 1, 2, 4, ... threads
// and writes the scaling JSON (docs/scaling-format.md).

#include <sys/utsname.h>
#include <unistd.h>

#include <cstdio>
#include <ctime>
#include <fstream>
#include <sstream>

#include "common/workload.h"
#include "lockscope/scaling/runner.h"
#include "lockscope/scaling/scaling_io.h"

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

} // namespace

int main(int argc, char** argv)
{
    const auto cpus = static_cast<int64_t>(sysconf(_SC_NPROCESSORS_ONLN));
    int64_t maxThreads = 2 * cpus;
    double duration = 0.5;
    int64_t opsPerThread = 0;
    std::string output = "scaling.json", only = "all";
    bool noProfile = false;
    workload::Flags flags("lockscope-scaling",
                          "Runs the before/after reference implementations of the five kernel lock-scaling\n"
                          "changes over 1, 2, 4, ... threads and writes a scaling JSON file.");
    flags.addInt("max-threads", &maxThreads, 1, 1024, "largest thread count (powers of two, plus this one)");
    flags.addDouble("duration", &duration, 0.01, 3600, "seconds per point");
    flags.addInt("ops", &opsPerThread, 0, int64_t{1} << 40,
                 "operations per thread per point instead of --duration (0: by duration)");
    flags.addString("pairs", &only, "comma-separated pair ids, or 'all'");
    flags.addString("output", &output, "file to write");
    flags.addSwitch("no-profile", &noProfile, "skip the lock wait/hold histograms (bare locks)");
    flags.parse(argc, argv);

    std::vector<const PairInfo*> selected;
    if (only == "all") {
        for (const auto& p : pairs())
            selected.push_back(&p);
    } else {
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
    }
    std::vector<unsigned> counts;
    for (int64_t t = 1; t < maxThreads; t *= 2)
        counts.push_back(static_cast<unsigned>(t));
    counts.push_back(static_cast<unsigned>(maxThreads));

    ScalingRun run;
    utsname u{};
    uname(&u);
    char host[256] = {};
    gethostname(host, sizeof host - 1);
    run.meta = {LOCKSCOPE_VERSION, utcNow(), host, u.release, cpuModel(), static_cast<unsigned>(cpus),
                duration, counts, std::vector<std::string>(argv, argv + argc)};

    std::vector<std::vector<std::string>> table{{"pair", "threads", "before ops/s", "after ops/s", "after/before"}};
    for (const PairInfo* info : selected) {
        ScalingPair pair{info->id, info->title, info->kernelChange, info->workload, {}};
        for (Variant v : {Variant::Before, Variant::After})
            pair.variants.push_back({variantName(v), v == Variant::Before ? info->before : info->after, {}});
        // Before and after alternate at each thread count, and which of them
        // goes first alternates too, so that drift in the machine's load
        // (shared CI hosts) and first-run effects hit both variants alike.
        bool afterFirst = false;
        for (unsigned t : counts) {
            const Variant order[2] = {afterFirst ? Variant::After : Variant::Before,
                                      afterFirst ? Variant::Before : Variant::After};
            afterFirst = !afterFirst;
            for (Variant v : order) {
                PointResult r = opsPerThread ? runOps(*info, v, t, static_cast<uint64_t>(opsPerThread), !noProfile)
                                             : runPoint(*info, v, t, duration, !noProfile);
                if (!r.violation.empty()) {
                    std::fprintf(stderr, "lockscope-scaling: %s/%s with %u threads broke an invariant: %s\n",
                                 info->id.c_str(), variantName(v), t, r.violation.c_str());
                    return 1;
                }
                ScalingPoint point{t, r.ops, r.duration_s, r.opsPerSec(), {}};
                for (auto& l : r.locks)
                    point.locks.push_back({l.name, l.type, l.wait, l.hold});
                pair.variants[v == Variant::Before ? 0 : 1].points.push_back(std::move(point));
            }
        }
        for (unsigned t : counts)
            table.push_back({info->id, std::to_string(t),
                             workload::formatNumber(pair.variants[0].at(t)->ops_per_sec),
                             workload::formatNumber(pair.variants[1].at(t)->ops_per_sec),
                             workload::formatNumber(pair.speedup(t).value_or(0), 2)});
        run.pairs.push_back(std::move(pair));
    }
    workload::printTable(table);
    try {
        writeScaling(run, output);
    } catch (const ScalingError& e) {
        std::fprintf(stderr, "lockscope-scaling: %s\n", e.what());
        return 1;
    }
    std::printf("wrote %s\n", output.c_str());
    return 0;
}
