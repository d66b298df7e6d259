// SPDX-License-Identifier: GPL-2.0-or-later
#include <cstdio>
#include <memory>

#include "commands.h"
#include "lockscope/capture/io.h"
#include "lockscope/reports/input.h"
#include "lockscope/reports/render.h"
#include "output.h"

namespace lockscope::cli {

void addReportCommand(CLI::App& app, Result& result)
{
    struct Opts {
        std::string capture, format = "text", lock, sort = "wait", output;
        size_t top = 20;
        std::vector<std::string> scaling;
    };
    auto o = std::make_shared<Opts>();
    CLI::App* cmd = app.add_subcommand("report", "Summarize one capture: headline, locks, histograms, call paths");
    cmd->add_option("capture", o->capture, "capture file (*.lockscope.json)")->required();
    cmd->add_option("--format", o->format, "text, md, html or json")->check(CLI::IsMember({"text", "md", "markdown", "html", "json"}));
    cmd->add_option("--top", o->top, "lock rows to show (0 = all)");
    cmd->add_option("--lock", o->lock, "show only the lock with this key");
    cmd->add_option("--sort", o->sort, "sort locks by wait, hold, count or max")
        ->check(CLI::IsMember({"wait", "hold", "count", "max"}));
    cmd->add_option("--scaling", o->scaling, "scaling results JSON (lockscope-scaling) to show beside the report");
    cmd->add_option("-o,--output", o->output, "write to this file instead of stdout");
    cmd->callback([o, &result]() {
        const Capture capture = reports::loadCapture(o->capture);
        reports::ReportOptions ro;
        ro.top = o->top;
        ro.lock_key = o->lock;
        ro.sort = *reports::parseSortKey(o->sort);
        reports::RenderExtras extras;
        for (const auto& path : o->scaling)
            for (auto& chart : reports::readScalingFile(path))
                extras.scaling.push_back(std::move(chart));
        const reports::Report report = reports::buildReport(capture, ro);
        emitPieces(o->output, [&](const reports::TextSink& sink) {
            reports::render(report, *reports::parseFormat(o->format), extras, sink);
        });
        result.exit_code = 0;
    });
}

} // namespace lockscope::cli
