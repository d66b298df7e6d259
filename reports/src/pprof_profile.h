// SPDX-License-Identifier: GPL-2.0-or-later
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "lockscope/capture/capture.h"
#include "protobuf.h"

// One pprof profile.proto under construction: the string table, one
// location and function per (function, module) so profiles of two kernel
// builds line up by name, and the samples. Both pprof exports (waiters and
// holders) fill one of these.
namespace lockscope::reports::detail {

class PprofProfile {
public:
    // sampleTypes: (type, unit) per value of every sample, in order.
    explicit PprofProfile(const std::vector<std::pair<const char*, const char*>>& sampleTypes);

    struct Label {
        const char* key;
        std::string str;                // "" for a numeric label
        std::optional<int64_t> num;
    };
    // frames innermost first (as Stack::frames); a missing or empty stack is one "[no stack]" frame.
    void addSample(const Stack* stack, const std::vector<uint64_t>& values, const std::vector<Label>& labels);
    // lock, lock_type, kernel_release, capture_label, lock_name and cgroup (the last three when known):
    // what every sample of a lock carries.
    static std::vector<Label> lockLabels(const Capture& capture, const Lock& lock);

    // The gzipped profile; period type contentions/count, period 1.
    std::string finish(const Capture& capture, const char* defaultSampleType);

private:
    uint64_t str(const std::string& s);
    uint64_t locationOf(const Frame& f);

    pb::Writer profile_;
    std::unordered_map<std::string, uint64_t> strIndex_;
    std::vector<std::string> strings_;
    std::map<std::pair<std::string, std::string>, uint64_t> locIds_;
    std::vector<std::pair<std::string, std::string>> locs_;
};

} // namespace lockscope::reports::detail
