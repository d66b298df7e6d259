// SPDX-License-Identifier: GPL-2.0-or-later
#pragma once

#include <functional>

#include <CLI/CLI.hpp>

namespace lockscope::cli {

// What a subcommand's callback leaves for main(): its exit code. Exceptions
// escaping a callback are turned into one "lockscope: <what>" line, exit 1.
struct Result {
    int exit_code = 0;
};

void addInfoCommand(CLI::App& app, Result& result);
void addCheckCommand(CLI::App& app, Result& result);
void addConvertCommand(CLI::App& app, Result& result);
void addLabCommand(CLI::App& app, Result& result);
#ifdef LOCKSCOPE_HAVE_RECORD
void addRecordCommand(CLI::App& app, Result& result);
void addAgentCommand(CLI::App& app, Result& result);
#endif
void addReportCommand(CLI::App& app, Result& result);
void addCompareCommand(CLI::App& app, Result& result);
void addExportCommand(CLI::App& app, Result& result);
void addImportCommand(CLI::App& app, Result& result);

} // namespace lockscope::cli
