// SPDX-License-Identifier: GPL-2.0-or-later
// Placeholder until the reader/writer lands.
#include "lockscope/capture/io.h"
