// SPDX-License-Identifier: GPL-2.0-or-later
// `lockscope info FILE`: what a capture holds, at a glance.
#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "commands.h"
#include "lockscope/capture/io.h"
#include "lockscope/capture/units.h"

namespace lockscope::cli {
namespace {

std::string joined(const std::vector<std::string>& words)
{
    std::string s;
    for (const auto& w : words) {
        if (!s.empty())
            s += ' ';
        // Quote what a shell would split, so the line can be pasted back.
        const bool quote = w.empty() || w.find_first_of(" \t\"'$\\") != std::string::npos;
        s += quote ? "'" + w + "'" : w;
    }
    return s;
}

std::string orUnknown(const std::string& s)
{
    return s.empty() ? "(unknown)" : s;
}

void printRow(const char* label, const std::string& value)
{
    std::printf("%-10s %s\n", label, value.c_str());
}

void printInfo(const std::string& file, const Capture& c, size_t topN)
{
    const Meta& m = c.meta;
    printRow("capture", file);
    printRow("label", orUnknown(m.label));
    printRow("kernel",
        orUnknown(m.kernel_release) + (m.kernel_version.empty() ? "" : " (" + m.kernel_version + ")"));
    printRow("build id", orUnknown(m.kernel_build_id));
    printRow("cpu", orUnknown(m.cpu_model) + ", " + std::to_string(m.cpu_count) + " CPUs");
    if (!m.hostname.empty())
        printRow("host", m.hostname);
    char dur[64];
    std::snprintf(dur, sizeof dur, "%.3f s", m.duration_s);
    printRow("recorded", orUnknown(m.start_time) + ", duration " + dur);
    if (!m.command.empty())
        printRow("command", joined(m.command));

    const Workload& w = c.workload;
    std::string status = "still running or not started";
    if (w.exit_status)
        status = "exit " + std::to_string(*w.exit_status);
    else if (w.signal)
        status = "killed by signal " + std::to_string(*w.signal);
    printRow("workload", w.command.empty() ? std::string("(none)") : joined(w.command) + " (" + status + ")");
    if (!w.results.empty()) {
        std::string r;
        for (const auto& [k, v] : w.results.items())
            r += (r.empty() ? "" : ", ") + k + "="
                + v.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
        printRow("results", r);
    }

    size_t attached = 0;
    for (const auto& p : c.probes)
        attached += p.attached;
    printRow("probes",
        std::to_string(attached) + " attached, " + std::to_string(c.probes.size() - attached) + " skipped");
    for (const auto& p : c.probes)
        if (!p.attached)
            std::printf("%-10s   skipped %s: %s\n", "", p.name.c_str(), p.reason.c_str());

    const Stats& s = c.stats;
    printRow("events",
        std::to_string(s.events) + " seen, " + std::to_string(s.lost) + " lost, " + std::to_string(s.map_full)
            + " map-full drops, " + std::to_string(s.stack_failures) + " stack failures, "
            + std::to_string(s.unmatched) + " unmatched");
    if (c.cpu.samples) {
        char share[96];
        std::snprintf(share, sizeof share, "%.1f%% of %" PRIu64 " samples in lock functions (%u Hz)",
            100.0 * c.cpu.lockShare(), c.cpu.samples, c.cpu.frequency_hz);
        printRow("cpu time", share);
    } else {
        printRow("cpu time", "not sampled");
    }
    printRow("stacks", std::to_string(c.stacks.size()));
    printRow("locks", std::to_string(c.locks.size()));

    std::vector<const Lock*> locks;
    for (const auto& l : c.locks)
        locks.push_back(&l);
    std::stable_sort(locks.begin(), locks.end(),
        [](const Lock* a, const Lock* b) { return a->wait.total() > b->wait.total(); });
    if (locks.size() > topN)
        locks.resize(topN);
    if (locks.empty())
        return;
    std::printf("\ntop %zu locks by total wait:\n", locks.size());
    size_t keyWidth = 4;
    for (const Lock* l : locks)
        keyWidth = std::max(keyWidth, l->key.size());
    const int kw = static_cast<int>(std::min<size_t>(keyWidth, 60));
    std::printf("  %-*s  %-9s %12s %12s %12s %12s\n", kw, "lock", "type", "waits", "total", "max", "p99");
    for (const Lock* l : locks)
        std::printf("  %-*s  %-9s %12" PRIu64 " %12s %12s %12s\n", kw, l->key.c_str(), l->type.c_str(),
            l->wait.count(), units::duration(double(l->wait.total())).c_str(), units::duration(double(l->wait.max())).c_str(),
            units::duration(double(l->wait.percentile(99))).c_str());
}

} // namespace

void addInfoCommand(CLI::App& app, Result& result)
{
    auto file = std::make_shared<std::string>();
    auto top = std::make_shared<size_t>(5);
    CLI::App* cmd
        = app.add_subcommand("info", "Summarize a capture: kernel, workload, probes, counters, top locks");
    cmd->add_option("file", *file, "capture file (*.lockscope.json)")->required();
    cmd->add_option("--top", *top, "how many locks to list (by total wait)")->check(CLI::Range(1, 1000));
    cmd->callback([file, top, &result] {
        Capture c;
        try {
            c = readCapture(*file);
        } catch (const CaptureError& e) {
            std::fprintf(stderr, "%s\n", e.what());
            result.exit_code = 1;
            return;
        }
        printInfo(*file, c, *top);
        std::fflush(stdout);
    });
}

} // namespace lockscope::cli
