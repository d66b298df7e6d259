// SPDX-License-Identifier: GPL-2.0-or-later
#include <cmath>
#include <cstdio>
#include <map>
#include <unordered_map>

#include "exchange_internal.h"
#include "protobuf.h"

// pprof profile.proto (github.com/google/pprof/proto/profile.proto), gzipped,
// as go tool pprof, Pyroscope and Parca read it. One sample per (lock, stack)
// with three values: contentions/count, delay/nanoseconds, hold/nanoseconds,
// labelled with the lock key, type and kernel release. Locations are one per
// (function, module), so profiles of two kernel builds line up by name.
namespace lockscope::reports::detail {

namespace {
// profile.proto field numbers.
enum : uint32_t {
    kSampleType = 1, kSample = 2, kMapping = 3, kLocation = 4, kFunction = 5, kStringTable = 6,
    kTimeNanos = 9, kDurationNanos = 10, kPeriodType = 11, kPeriod = 12, kComment = 13, kDefaultSampleType = 14,
};

class Strings {
public:
    Strings() { id(""); }
    uint64_t id(const std::string& s)
    {
        auto [it, inserted] = index_.try_emplace(s, table_.size());
        if (inserted)
            table_.push_back(s);
        return it->second;
    }
    const std::vector<std::string>& table() const { return table_; }

private:
    std::unordered_map<std::string, uint64_t> index_;
    std::vector<std::string> table_;
};

pb::Writer valueType(Strings& st, const char* type, const char* unit)
{
    pb::Writer w;
    w.int64Field(1, int64_t(st.id(type)));
    w.int64Field(2, int64_t(st.id(unit)));
    return w;
}

pb::Writer label(Strings& st, const char* key, const std::string& value)
{
    pb::Writer w;
    w.int64Field(1, int64_t(st.id(key)));
    w.int64Field(2, int64_t(st.id(value)));
    return w;
}

class Pprof final : public Exporter {
public:
    std::string_view name() const noexcept override { return "pprof"; }
    std::string_view extension() const noexcept override { return ".pb.gz"; }
    bool binary() const noexcept override { return true; }

    std::string write(const Capture& capture, const ExportOptions& options) const override
    {
        Strings st;
        pb::Writer profile;
        profile.messageField(kSampleType, valueType(st, "contentions", "count"));
        profile.messageField(kSampleType, valueType(st, "delay", "nanoseconds"));
        profile.messageField(kSampleType, valueType(st, "hold", "nanoseconds"));

        // Locations and functions, one per (function, module).
        std::map<std::pair<std::string, std::string>, uint64_t> locIds;
        std::vector<std::pair<std::string, std::string>> locs;
        auto locationOf = [&](const Frame& f) {
            std::string fn = f.function;
            if (fn.empty()) {
                char buf[32];
                std::snprintf(buf, sizeof buf, "0x%llx", static_cast<unsigned long long>(f.address.value_or(0)));
                fn = f.address ? buf : "[unknown]";
            }
            auto key = std::make_pair(fn, f.module);
            auto [it, inserted] = locIds.try_emplace(key, locs.size() + 1);
            if (inserted)
                locs.push_back(key);
            return it->second;
        };

        const StackIndex index(capture);
        for (const auto& lock : capture.locks) {
            for (const auto& site : lock.sites) {
                pb::Writer sample;
                std::vector<uint64_t> ids;
                if (const Stack* s = index.find(site.stack_id); s && !s->frames.empty()) {
                    for (const auto& f : s->frames)  // leaf first, as profile.proto wants
                        ids.push_back(locationOf(f));
                } else {
                    ids.push_back(locationOf(Frame{"[no stack]", 0, "", std::nullopt}));
                }
                sample.packedVarints(1, ids);
                sample.packedVarints(2, {site.wait.count() ? site.wait.count() : site.hold.count(), site.wait.total(),
                                         site.hold.total()});
                sample.messageField(3, label(st, "lock", lock.key));
                sample.messageField(3, label(st, "lock_type", lock.type));
                sample.messageField(3, label(st, "kernel_release", capture.meta.kernel_release));
                if (!capture.meta.label.empty())
                    sample.messageField(3, label(st, "capture_label", capture.meta.label));
                profile.messageField(kSample, sample);
            }
        }
        for (size_t i = 0; i < locs.size(); ++i) {
            const std::string& fn = locs[i].first;
            const std::string& mod = locs[i].second;
            pb::Writer function;
            function.varintField(1, i + 1);
            function.int64Field(2, int64_t(st.id(fn)));
            function.int64Field(3, int64_t(st.id(fn)));
            function.int64Field(4, int64_t(st.id(mod.empty() ? "vmlinux" : mod)));
            profile.messageField(kFunction, function);
            pb::Writer line;
            line.varintField(1, i + 1);
            pb::Writer location;
            location.varintField(1, i + 1);
            location.messageField(4, line);
            profile.messageField(kLocation, location);
        }
        profile.int64Field(kDurationNanos, int64_t(std::llround(capture.meta.duration_s * 1e9)));
        profile.messageField(kPeriodType, valueType(st, "contentions", "count"));
        profile.int64Field(kPeriod, 1);
        profile.int64Field(kComment, int64_t(st.id("lockscope " + capture.meta.tool_version + ", kernel " +
                                                   capture.meta.kernel_release)));
        const char* defaultType = options.weight == Weight::Count ? "contentions"
                                  : options.weight == Weight::Hold ? "hold" : "delay";
        profile.int64Field(kDefaultSampleType, int64_t(st.id(defaultType)));
        // The string table goes last: every id above is final by now.
        for (const auto& s : st.table())
            profile.bytesField(kStringTable, s);
        return pb::gzip(profile.data());
    }
};
} // namespace

const Exporter& pprofExporter()
{
    static const Pprof e;
    return e;
}

} // namespace lockscope::reports::detail
