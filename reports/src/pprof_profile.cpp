// SPDX-License-Identifier: GPL-2.0-or-later
#include "pprof_profile.h"

#include <cmath>
#include <cstdio>
#include <utility>

#include "format_util.h"

// pprof profile.proto (github.com/google/pprof/proto/profile.proto), gzipped,
// as go tool pprof, Pyroscope and Parca read it.
namespace lockscope::reports::detail {

namespace {
// profile.proto field numbers.
enum : uint32_t {
    kSampleType = 1, kSample = 2, kMapping = 3, kLocation = 4, kFunction = 5, kStringTable = 6,
    kTimeNanos = 9, kDurationNanos = 10, kPeriodType = 11, kPeriod = 12, kComment = 13, kDefaultSampleType = 14,
};
} // namespace

PprofProfile::PprofProfile(const std::vector<std::pair<const char*, const char*>>& sampleTypes)
{
    str("");
    for (const auto& [type, unit] : sampleTypes) {
        pb::Writer vt;
        vt.int64Field(1, int64_t(str(type)));
        vt.int64Field(2, int64_t(str(unit)));
        profile_.messageField(kSampleType, vt);
    }
}

uint64_t PprofProfile::str(const std::string& raw)
{
    // profile.proto's strings are UTF-8; a comm or symbol is any bytes.
    std::string s = fmt::validUtf8(raw);
    auto [it, inserted] = strIndex_.try_emplace(s, strings_.size());
    if (inserted)
        strings_.push_back(std::move(s));
    return it->second;
}

uint64_t PprofProfile::locationOf(const Frame& f)
{
    std::string fn = f.function;
    if (fn.empty()) {
        char buf[32];
        const int n = std::snprintf(buf, sizeof buf, "0x%llx", static_cast<unsigned long long>(f.address.value_or(0)));
        fn = f.address && n > 0 ? std::string(buf, static_cast<size_t>(n)) : "[unknown]";
    }
    auto key = std::make_pair(fn, f.module);
    auto [it, inserted] = locIds_.try_emplace(key, locs_.size() + 1);
    if (inserted)
        locs_.push_back(key);
    return it->second;
}

void PprofProfile::addSample(const Stack* stack, const std::vector<uint64_t>& values, const std::vector<Label>& labels)
{
    pb::Writer sample;
    std::vector<uint64_t> ids;
    if (stack && !stack->frames.empty()) {
        for (const auto& f : stack->frames) // leaf first, as profile.proto wants
            ids.push_back(locationOf(f));
    } else {
        ids.push_back(locationOf(Frame{"[no stack]", 0, "", std::nullopt}));
    }
    sample.packedVarints(1, ids);
    sample.packedVarints(2, values);
    for (const Label& l : labels) {
        pb::Writer w;
        w.int64Field(1, int64_t(str(l.key)));
        if (l.num)
            w.int64Field(3, *l.num);
        else
            w.int64Field(2, int64_t(str(l.str)));
        sample.messageField(3, w);
    }
    profile_.messageField(kSample, sample);
}

std::vector<PprofProfile::Label> PprofProfile::lockLabels(const Capture& capture, const Lock& lock)
{
    std::vector<Label> labels{{"lock", lock.key, {}}, {"lock_type", lock.type, {}},
                              {"kernel_release", capture.meta.kernel_release, {}}};
    if (!capture.meta.label.empty())
        labels.push_back({"capture_label", capture.meta.label, {}});
    // Parca and Pyroscope turn labels into columns to filter on.
    if (!lock.name.empty())
        labels.push_back({"lock_name", lock.name, {}});
    if (!lock.cgroup.empty())
        labels.push_back({"cgroup", lock.cgroup, {}});
    return labels;
}

std::string PprofProfile::finish(const Capture& capture, const char* defaultSampleType)
{
    for (size_t i = 0; i < locs_.size(); ++i) {
        const std::string& fn = locs_[i].first;
        const std::string& mod = locs_[i].second;
        pb::Writer function;
        function.varintField(1, i + 1);
        function.int64Field(2, int64_t(str(fn)));
        function.int64Field(3, int64_t(str(fn)));
        function.int64Field(4, int64_t(str(mod.empty() ? "vmlinux" : mod)));
        profile_.messageField(kFunction, function);
        pb::Writer line;
        line.varintField(1, i + 1);
        pb::Writer location;
        location.varintField(1, i + 1);
        location.messageField(4, line);
        profile_.messageField(kLocation, location);
    }
    profile_.int64Field(kDurationNanos, int64_t(std::llround(capture.meta.duration_s * 1e9)));
    pb::Writer period;
    period.int64Field(1, int64_t(str("contentions")));
    period.int64Field(2, int64_t(str("count")));
    profile_.messageField(kPeriodType, period);
    profile_.int64Field(kPeriod, 1);
    profile_.int64Field(kComment,
                        int64_t(str("lockscope " + capture.meta.tool_version + ", kernel " + capture.meta.kernel_release)));
    profile_.int64Field(kDefaultSampleType, int64_t(str(defaultSampleType)));
    // The string table goes last: every id above is final by now.
    for (const auto& s : strings_)
        profile_.bytesField(kStringTable, s);
    return pb::gzip(profile_.data());
}

} // namespace lockscope::reports::detail
