// SPDX-License-Identifier: GPL-2.0-or-later
#include <memory>
#include <string>
#include <unistd.h>
#include <vector>

#include "commands.h"
#include "lockscope/reports/exchange.h"
#include "lockscope/reports/input.h"
#include "output.h"

namespace lockscope::cli {

namespace {
bool hasHolders(const Capture& capture)
{
    for (const auto& lock : capture.locks)
        for (const auto& site : lock.sites)
            if (!site.holders.empty())
                return true;
    return false;
}
} // namespace

void addExportCommand(CLI::App& app, Result& result)
{
    struct Opts {
        std::string capture, format, weight = "wait", output;
    };
    auto o = std::make_shared<Opts>();
    CLI::App* cmd = app.add_subcommand("export", "Convert a capture to folded stacks, pprof or speedscope");
    cmd->add_option("capture", o->capture, "capture file")->required();
    // The formats are the registry's (reports/src/exchange.cpp), so a new
    // exporter needs no change here.
    std::vector<std::string> formats;
    for (const reports::Exporter* e : reports::exporters())
        formats.emplace_back(e->name());
    cmd->add_option("--format", o->format, "output format: folded, pprof, speedscope, or pprof-holders (Go's mutex profile: wait charged to the holders' stacks)")->required()->check(CLI::IsMember(formats));
    cmd->add_option("--weight", o->weight,
                    "wait, hold, count or acquire (spin in the lock call, record --hold); pprof carries them all")
        ->check(CLI::IsMember({"wait", "hold", "count", "acquire"}));
    cmd->add_option("-o,--output", o->output, "output file (default: stdout)");
    cmd->callback([o, &result]() {
        const reports::Exporter* e = reports::findExporter(o->format);
        if (e->binary() && o->output.empty() && ::isatty(STDOUT_FILENO))
            throw std::runtime_error("export --format " + o->format +
                                     " writes binary data; give -o FILE or redirect standard output");
        const Capture capture = reports::loadCapture(o->capture);
        if (o->format == "pprof-holders" && !hasHolders(capture))
            throw std::runtime_error(o->capture + " names no lock holders: record with --lock-owner (mutex and rwsem"
                                                  " owners) or --holder-stacks (spinlock holders)");
        reports::ExportOptions eo;
        eo.weight = *reports::parseWeight(o->weight);
        emit(e->write(capture, eo), o->output);
        result.exit_code = 0;
    });
}

} // namespace lockscope::cli
