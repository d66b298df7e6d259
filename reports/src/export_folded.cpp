// SPDX-License-Identifier: GPL-2.0-or-later
#include <algorithm>
#include <map>

#include "exchange_internal.h"
#include "format_util.h"
#include "paths.h"

// Brendan Gregg's folded format: "frame;frame;...;leaf weight" per line,
// outermost frame first. The lock key is appended as the leaf so one flame
// graph shows which lock every path ends in.
namespace lockscope::reports::detail {

namespace {
class Folded final : public Exporter {
public:
    std::string_view name() const noexcept override { return "folded"; }
    std::string_view extension() const noexcept override { return ".folded"; }
    bool binary() const noexcept override { return false; }

    std::string write(const Capture& capture, const ExportOptions& options) const override
    {
        // Sorted and merged so the output is deterministic and diffable
        // (difffolded.pl, speedscope and flamegraph.pl all accept it).
        std::map<std::string, uint64_t> lines;
        const StackIndex index(capture);
        for (const auto& lock : capture.locks)
            for (const SiteShare& site : shareOutUnsampled(lock, index).sites) {
                const uint64_t w = siteWeight(site, options.weight);
                if (!w)
                    continue;
                std::string key;
                // One frame per ';'-separated field, one stack per line
                // (fmt::foldedFrame); the last space separates the weight.
                for (const auto& label : pathLabels(index.find(site.stack_id)))
                    key += fmt::foldedFrame(label) + ";";
                key += "[" + fmt::foldedFrame(lock.key) + "]";
                lines[key] += w;
            }
        std::string out;
        for (const auto& [k, v] : lines)
            out += k + " " + std::to_string(v) + "\n";
        return out;
    }
};
} // namespace

const Exporter& foldedExporter()
{
    static const Folded e;
    return e;
}

} // namespace lockscope::reports::detail
