// SPDX-License-Identifier: GPL-2.0-or-later
#pragma once

#include <cstdint>

#include "lockscope/capture/site_shares.h"
#include "lockscope/reports/exchange.h"

namespace lockscope::reports::detail {

const Exporter& foldedExporter();
const Exporter& pprofExporter();
const Exporter& pprofHoldersExporter();
const Exporter& speedscopeExporter();
const Importer& perfScriptImporter();
const Importer& lockStatImporter();

// A site's weight with its share of the lock's unwalked events (site_shares.h).
uint64_t siteWeight(const SiteShare& site, Weight w) noexcept;

} // namespace lockscope::reports::detail
