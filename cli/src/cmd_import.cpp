// SPDX-License-Identifier: GPL-2.0-or-later
#include <fstream>
#include <iostream>
#include <iterator>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "commands.h"
#include "lockscope/capture/io.h"
#include "lockscope/reports/exchange.h"

namespace lockscope::cli {

void addImportCommand(CLI::App& app, Result& result)
{
    struct Opts {
        std::string kind, input, output, label;
    };
    auto o = std::make_shared<Opts>();
    CLI::App* cmd = app.add_subcommand("import", "Turn perf script text or /proc/lock_stat into a capture");
    // The kinds are the registry's (reports/src/exchange.cpp), so a new
    // importer needs no change here.
    std::vector<std::string> kinds;
    for (const reports::Importer* i : reports::importers())
        kinds.emplace_back(i->name());
    cmd->add_option("kind", o->kind, "input kind")->required()->check(CLI::IsMember(kinds));
    cmd->add_option("file", o->input, "input file ('-' for stdin)")->required();
    cmd->add_option("-o,--output", o->output, "capture file to write")->required();
    cmd->add_option("--label", o->label, "capture label (e.g. baseline, patched)");
    cmd->callback([o, &result]() {
        std::string text;
        if (o->input == "-") {
            text.assign(std::istreambuf_iterator<char>(std::cin), {});
        } else {
            std::ifstream in(o->input, std::ios::binary);
            if (!in)
                throw std::runtime_error(o->input + ": cannot open for reading");
            std::ostringstream ss;
            ss << in.rdbuf();
            text = ss.str();
        }
        Capture c = reports::findImporter(o->kind)->read(text, o->input == "-" ? "<stdin>" : o->input);
        if (!o->label.empty())
            c.meta.label = o->label;
        writeCapture(c, o->output, WriteOptions { .layout = CaptureLayout::Compact }); // as record writes
        std::fprintf(stderr, "lockscope: imported %zu locks, %zu stacks, %llu events into %s\n", c.locks.size(),
                     c.stacks.size(), static_cast<unsigned long long>(c.stats.events), o->output.c_str());
        result.exit_code = 0;
    });
}

} // namespace lockscope::cli
