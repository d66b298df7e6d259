// SPDX-License-Identifier: GPL-2.0-or-later
#include <algorithm>
#include <string>

#include "exchange_internal.h"
#include "pprof_profile.h"

// The two pprof exports. "pprof" is the waiters' side: one sample per
// (lock, waiter stack) with contentions/count, delay/nanoseconds and
// hold/nanoseconds. "pprof-holders" is the holders' side, as Go's mutex
// profile: one sample per holder of a lock (the owner's stack for
// mutex/rwsem owners, the acquire stack for spinlock holders) with the
// contentions and wait time charged to it, labelled with the owner task.
namespace lockscope::reports::detail {

namespace {

class Pprof final : public Exporter {
public:
    std::string_view name() const noexcept override { return "pprof"; }
    std::string_view extension() const noexcept override { return ".pb.gz"; }
    bool binary() const noexcept override { return true; }

    std::string write(const Capture& capture, const ExportOptions& options) const override
    {
        // "acquire" only where the capture timed spin acquisitions: older
        // profiles keep their three sample types.
        const bool acquire = std::any_of(capture.locks.begin(), capture.locks.end(),
                                         [](const Lock& l) { return !l.acquire.empty(); });
        std::vector<std::pair<const char*, const char*>> types = {
            {"contentions", "count"}, {"delay", "nanoseconds"}, {"hold", "nanoseconds"}};
        if (acquire)
            types.push_back({"acquire", "nanoseconds"});
        PprofProfile profile(types);
        const StackIndex index(capture);
        for (const auto& lock : capture.locks) {
            const auto labels = PprofProfile::lockLabels(capture, lock);
            for (const SiteShare& site : shareOutUnsampled(lock, index).sites) {
                std::vector<uint64_t> values = {site.count(), site.wait_ns, site.hold_ns};
                if (acquire)
                    values.push_back(site.acquire_ns);
                profile.addSample(index.find(site.stack_id), values, labels);
            }
        }
        return profile.finish(capture, options.weight == Weight::Count     ? "contentions"
                                       : options.weight == Weight::Hold    ? "hold"
                                       : options.weight == Weight::Acquire && acquire ? "acquire"
                                                                           : "delay");
    }
};

class PprofHolders final : public Exporter {
public:
    std::string_view name() const noexcept override { return "pprof-holders"; }
    std::string_view extension() const noexcept override { return ".holders.pb.gz"; }
    bool binary() const noexcept override { return true; }

    std::string write(const Capture& capture, const ExportOptions& options) const override
    {
        PprofProfile profile({{"contentions", "count"}, {"delay", "nanoseconds"}});
        const StackIndex index(capture);
        for (const auto& lock : capture.locks) {
            const auto lockLabels = PprofProfile::lockLabels(capture, lock);
            // Owners named without their stack shared out over those with one (site_shares.h).
            for (const Holder& h : shareOutHolders(lock, index).holders) {
                auto labels = lockLabels;
                if (h.owner_tid) {
                    labels.push_back({"owner_comm", h.owner_comm.empty() ? "?" : h.owner_comm, {}});
                    labels.push_back({"owner_tid", "", int64_t(*h.owner_tid)});
                }
                profile.addSample(index.find(h.stack_id), {h.count, h.wait_ns}, labels);
            }
        }
        return profile.finish(capture, options.weight == Weight::Count ? "contentions" : "delay");
    }
};

} // namespace

const Exporter& pprofExporter()
{
    static const Pprof e;
    return e;
}

const Exporter& pprofHoldersExporter()
{
    static const PprofHolders e;
    return e;
}

} // namespace lockscope::reports::detail
