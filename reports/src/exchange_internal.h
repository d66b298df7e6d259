// SPDX-License-Identifier: GPL-2.0-or-later
#pragma once

#include <cstdint>

#include "lockscope/reports/exchange.h"

namespace lockscope::reports::detail {

const Exporter& foldedExporter();
const Exporter& pprofExporter();
const Exporter& pprofHoldersExporter();
const Exporter& speedscopeExporter();
const Importer& perfScriptImporter();
const Importer& lockStatImporter();

uint64_t siteWeight(const LockSite& site, Weight w) noexcept;

} // namespace lockscope::reports::detail
