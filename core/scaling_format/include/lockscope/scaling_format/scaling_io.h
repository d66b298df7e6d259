// SPDX-License-Identifier: GPL-2.0-or-later
#pragma once

// The scaling JSON file ("format": "lockscope-scaling", "version": 1) written
// by lockscope-scaling and read by reports/ and gui/. See docs/scaling-format.md.

#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "lockscope/capture/histogram.h"

namespace lockscope::scaling {

inline constexpr const char* kScalingFormat = "lockscope-scaling";
inline constexpr int kScalingVersion = 1;

// One line: "<file>: <json path>: <problem>", e.g.
// "run.json: pairs[2].variants[0].points[1].ops: expected an unsigned integer, got "x"".
class ScalingError : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

struct ScalingLock {
    std::string name, type;
    Log2Hist wait, hold;
};

struct ScalingPoint {
    unsigned threads = 0;
    uint64_t ops = 0;
    double duration_s = 0;
    double ops_per_sec = 0;
    std::vector<ScalingLock> locks;
};

struct ScalingVariant {
    std::string name;  // "before" or "after"
    std::string description;
    std::vector<ScalingPoint> points;  // ascending thread counts
    const ScalingPoint* at(unsigned threads) const;
};

struct ScalingPair {
    std::string id, title, kernel_change, workload;
    std::vector<ScalingVariant> variants;
    const ScalingVariant* variant(std::string_view name) const;
    // after ops/s divided by before ops/s at that thread count, if both exist.
    std::optional<double> speedup(unsigned threads) const;
};

struct ScalingMeta {
    std::string tool_version;
    std::string created;  // ISO 8601 UTC
    std::string hostname, kernel_release, cpu_model;
    unsigned cpus = 0;
    double duration_per_point_s = 0;
    std::vector<unsigned> thread_counts;
    std::vector<std::string> command;
};

struct ScalingRun {
    ScalingMeta meta;
    std::vector<ScalingPair> pairs;
    const ScalingPair* pair(std::string_view id) const;
};

nlohmann::json toJson(const ScalingRun& run);
ScalingRun scalingFromJson(const nlohmann::json& doc);
ScalingRun parseScaling(std::string_view text);
ScalingRun readScaling(const std::string& path);
// Atomic write (temp file + rename) through lockscope::util::writeFileAtomic.
void writeScaling(const ScalingRun& run, const std::string& path);

} // namespace lockscope::scaling
