// SPDX-License-Identifier: GPL-2.0-or-later
// `lockscope info FILE`: what a capture holds, at a glance.
#include <algorithm>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "commands.h"
#include "option_checks.h"
#include "lockscope/capture/io.h"
#include "lockscope/reports/format.h"
#include "lockscope/reports/render.h"

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

// reports' top-locks table with every lock (not only the contended ones),
// keys in full and the p99 wait instead of the mean.
reports::TopLocksLayout infoLayout()
{
    using C = reports::LockColumn;
    reports::TopLocksLayout layout;
    layout.columns = {C::Key, C::Type, C::Contended, C::TotalWait, C::MaxWait, C::P99Wait};
    layout.indent = "  ";
    layout.key_width = 60;
    layout.cut_keys = false;
    layout.type_width = 9;
    layout.figure_width = 12;
    layout.contended_only = false;
    return layout;
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
    printRow("recorded", orUnknown(m.start_time) + ", duration " + reports::fmt::fixed(m.duration_s, 3) + " s");
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
        printRow("cpu time", reports::fmt::percent(c.cpu.lockShare(), 1) + " of " + std::to_string(c.cpu.samples)
            + " samples in lock functions (" + std::to_string(c.cpu.frequency_hz) + " Hz)");
        if (c.cpu.bpf_samples.value_or(0))
            printRow("", std::string(reports::fmt::kCpuBpfLabel) + ": " + reports::fmt::percent(c.cpu.bpfShare(), 1));
    } else {
        printRow("cpu time", "not sampled");
    }
    printRow("stacks", std::to_string(c.stacks.size()));
    printRow("locks", std::to_string(c.locks.size()));

    if (c.locks.empty())
        return;
    std::printf("\ntop %zu locks by total wait:\n", std::min(topN, c.locks.size()));
    std::fputs(reports::topLocksTable(c, topN, infoLayout()).c_str(), stdout);
}

} // namespace

void addInfoCommand(CLI::App& app, Result& result)
{
    auto file = std::make_shared<std::string>();
    auto top = std::make_shared<size_t>(5);
    CLI::App* cmd
        = app.add_subcommand("info", "Summarize a capture: kernel, workload, probes, counters, top locks");
    cmd->add_option("file", *file, "capture file (*.lockscope.json)")->required();
    cmd->add_option("--top", *top, "how many locks to list (by total wait)")->check(within(1, 1000));
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
