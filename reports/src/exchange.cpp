// SPDX-License-Identifier: GPL-2.0-or-later
#include "lockscope/reports/exchange.h"

#include <algorithm>

#include "exchange_internal.h"

namespace lockscope::reports {

const std::vector<const Exporter*>& exporters()
{
    static const std::vector<const Exporter*> all{&detail::foldedExporter(), &detail::pprofExporter(),
                                                  &detail::pprofHoldersExporter(), &detail::speedscopeExporter()};
    return all;
}

const std::vector<const Importer*>& importers()
{
    static const std::vector<const Importer*> all{&detail::perfScriptImporter(), &detail::lockStatImporter()};
    return all;
}

const Exporter* findExporter(std::string_view name) noexcept
{
    for (const Exporter* e : exporters())
        if (e->name() == name)
            return e;
    return nullptr;
}

const Importer* findImporter(std::string_view name) noexcept
{
    for (const Importer* i : importers())
        if (i->name() == name)
            return i;
    return nullptr;
}

std::optional<Weight> parseWeight(std::string_view name)
{
    if (name == "wait")
        return Weight::Wait;
    if (name == "hold")
        return Weight::Hold;
    if (name == "count")
        return Weight::Count;
    if (name == "acquire")
        return Weight::Acquire;
    return std::nullopt;
}

uint64_t detail::siteWeight(const SiteShare& site, Weight w) noexcept
{
    switch (w) {
    case Weight::Wait: return site.wait_ns;
    case Weight::Hold: return site.hold_ns;
    case Weight::Count: return site.count();
    case Weight::Acquire: return site.acquire_ns;
    }
    return 0;
}

} // namespace lockscope::reports
