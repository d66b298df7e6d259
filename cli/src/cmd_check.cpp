// SPDX-License-Identifier: GPL-2.0-or-later
// `lockscope check FILE...`: validate captures, one verdict line per file.
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "commands.h"
#include "lockscope/capture/io.h"

namespace lockscope::cli {

void addCheckCommand(CLI::App& app, Result& result)
{
    auto files = std::make_shared<std::vector<std::string>>();
    CLI::App* cmd
        = app.add_subcommand("check", "Validate capture files (exit 0 when all are valid, 1 otherwise)");
    cmd->add_option("files", *files, "capture files (*.lockscope.json, *.lockscope.json.zst; any format version)")->required();
    cmd->callback([files, &result] {
        for (const auto& file : *files) {
            try {
                const Capture c = readCapture(file);
                std::printf(
                    "%s: ok (%zu locks, %zu stacks)\n", file.c_str(), c.locks.size(), c.stacks.size());
            } catch (const CaptureError& e) {
                // The reader's message already names the file and the JSON path.
                std::fflush(stdout);
                std::fprintf(stderr, "%s\n", e.what());
                result.exit_code = 1;
            }
        }
        std::fflush(stdout);
    });
}

} // namespace lockscope::cli
