// SPDX-License-Identifier: GPL-2.0-or-later
#include <algorithm>
#include <map>
#include <unordered_map>

#include <nlohmann/json.hpp>

#include "exchange_internal.h"
#include "lockscope/capture/calltree.h"

// speedscope's file format (https://www.speedscope.app/file-format-schema.json):
// shared frames plus "sampled" profiles whose samples are frame-index stacks
// (outermost first) with weights. One profile for all locks (the lock key
// as the leaf frame) and one per lock, hottest first.
namespace lockscope::reports::detail {

namespace {
using nlohmann::json;

class Speedscope final : public Exporter {
public:
    std::string_view name() const noexcept override { return "speedscope"; }
    std::string_view extension() const noexcept override { return ".speedscope.json"; }
    bool binary() const noexcept override { return false; }

    std::string write(const Capture& capture, const ExportOptions& options) const override
    {
        json frames = json::array();
        std::unordered_map<std::string, size_t> frameIds;
        auto frameId = [&](const std::string& name, const std::string& file) {
            auto [it, inserted] = frameIds.try_emplace(name + '\x1f' + file, frames.size());
            if (inserted) {
                json f = {{"name", name}};
                if (!file.empty())
                    f["file"] = file;
                frames.push_back(std::move(f));
            }
            return it->second;
        };
        const char* unit = options.weight == Weight::Count ? "none" : "nanoseconds";
        const StackIndex index(capture);
        struct Shared {
            const Lock* lock;
            std::vector<SiteShare> sites;
            uint64_t weight = 0;
        };
        std::vector<Shared> order;
        for (const auto& l : capture.locks) {
            Shared s{&l, shareOutUnsampled(l, index).sites};
            for (const auto& site : s.sites)
                s.weight += siteWeight(site, options.weight);
            order.push_back(std::move(s));
        }
        std::stable_sort(order.begin(), order.end(),
                         [](const Shared& a, const Shared& b) { return a.weight > b.weight; });

        struct Profile {
            json samples = json::array();
            json weights = json::array();
            uint64_t total = 0;
        };
        auto addSite = [&](Profile& p, const Lock& lock, const SiteShare& site, bool lockLeaf) {
            const uint64_t w = siteWeight(site, options.weight);
            if (!w)
                return;
            json stack = json::array();
            if (const Stack* s = index.find(site.stack_id))
                for (auto it = s->frames.rbegin(); it != s->frames.rend(); ++it)
                    stack.push_back(frameId(it->function.empty() ? "[unknown]" : it->function,
                                            it->module.empty() ? "vmlinux" : it->module));
            if (lockLeaf)
                stack.push_back(frameId("[" + lock.key + "]", ""));
            p.samples.push_back(std::move(stack));
            p.weights.push_back(w);
            p.total += w;
        };
        auto emit = [&](const std::string& name, Profile& p) {
            return json{{"type", "sampled"}, {"name", name}, {"unit", unit}, {"startValue", 0},
                        {"endValue", p.total}, {"samples", std::move(p.samples)}, {"weights", std::move(p.weights)}};
        };
        json profiles = json::array();
        Profile all;
        for (const Shared& l : order)
            for (const auto& s : l.sites)
                addSite(all, *l.lock, s, true);
        const char* what = options.weight == Weight::Wait      ? "wait"
                           : options.weight == Weight::Hold    ? "hold"
                           : options.weight == Weight::Acquire ? "acquire"
                                                               : "count";
        profiles.push_back(emit(std::string("all locks (") + what + ")", all));
        for (const Shared& l : order) {
            Profile p;
            for (const auto& s : l.sites)
                addSite(p, *l.lock, s, false);
            if (p.total)
                profiles.push_back(emit(l.lock->key + " (" + l.lock->type + ")", p));
        }
        json doc = {{"$schema", "https://www.speedscope.app/file-format-schema.json"},
                    {"shared", {{"frames", std::move(frames)}}},
                    {"profiles", std::move(profiles)},
                    {"name", "lockscope " + capture.meta.label + " " + capture.meta.kernel_release},
                    {"activeProfileIndex", 0},
                    {"exporter", "lockscope " + capture.meta.tool_version}};
        return doc.dump(-1, ' ', false, json::error_handler_t::replace) + "\n"; // comms and symbols need not be UTF-8
    }
};
} // namespace

const Exporter& speedscopeExporter()
{
    static const Speedscope e;
    return e;
}

} // namespace lockscope::reports::detail
