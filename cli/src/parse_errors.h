// SPDX-License-Identifier: GPL-2.0-or-later
#pragma once

#include <string>

#include <CLI/CLI.hpp>

namespace lockscope::cli {

// The one line a usage error prints, without "lockscope: ": what was wrong,
// in the user's words and order, and which command's --help to read
// ("see lockscope record --help"). CLI11 2.1 lists unexpected arguments
// backwards, with the "--" before a workload among them, and answers an
// unknown command with "A subcommand is required".
std::string parseErrorLine(const CLI::App& app, const CLI::ParseError& error, int argc, char** argv);

} // namespace lockscope::cli
