// SPDX-License-Identifier: GPL-2.0-or-later
#include "commands.h"
void lockscope::cli::addCheckCommand(CLI::App&, Result&) {}
