// SPDX-License-Identifier: GPL-2.0-or-later
// `lockscope convert IN -o OUT`: rewrites a capture in the compact layout
// (or, with --capture-version 1, the old one for an older lockscope),
// zstd-compressed when OUT ends in ".zst". Every figure stays as it is.
#include <cstdio>
#include <memory>
#include <string>

#include "commands.h"
#include "lockscope/capture/io.h"

namespace lockscope::cli {

void addConvertCommand(CLI::App& app, Result& result)
{
    struct Opts {
        std::string input, output;
        int version = kCaptureVersionCompact;
        bool pretty = false;
    };
    auto o = std::make_shared<Opts>();
    CLI::App* cmd = app.add_subcommand(
        "convert", "Rewrite a capture in another format version (compact by default; *.zst compressed)");
    cmd->add_option("file", o->input, "capture file (*.lockscope.json or *.lockscope.json.zst)")->required();
    cmd->add_option("-o,--output", o->output, "capture file to write (*.lockscope.json[.zst], '-' for stdout)")
        ->required();
    cmd->add_option("--capture-version", o->version, "format version to write: 2 (compact) or 1 (older lockscope)")
        ->check(CLI::IsMember({ kCaptureVersion, kCaptureVersionCompact }));
    cmd->add_flag("--pretty", o->pretty, "indent the JSON (larger; for reading and diffs)");
    cmd->callback([o, &result] {
        const Capture c = readCapture(o->input);
        WriteOptions options;
        options.pretty = o->pretty;
        options.layout = o->version == kCaptureVersionCompact ? CaptureLayout::Compact : CaptureLayout::Full;
        writeCapture(c, o->output, options);
        if (o->output != "-")
            std::fprintf(stderr, "lockscope: wrote %s (format version %d, %zu locks, %zu stacks)\n",
                o->output.c_str(), o->version, c.locks.size(), c.stacks.size());
        result.exit_code = 0;
    });
}

} // namespace lockscope::cli
