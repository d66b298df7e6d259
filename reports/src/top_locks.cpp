// SPDX-License-Identifier: GPL-2.0-or-later
#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <sstream>

#include "lockscope/capture/units.h"
#include "lockscope/reports/render.h"

namespace lockscope::reports {

std::string topLocksTable(const Capture& capture, size_t rows)
{
    std::vector<const Lock*> locks;
    for (const auto& l : capture.locks)
        if (!l.wait.empty())
            locks.push_back(&l);
    std::stable_sort(locks.begin(), locks.end(),
                     [](const Lock* a, const Lock* b) { return a->wait.total() > b->wait.total(); });
    if (locks.size() > rows)
        locks.resize(rows);
    size_t keyW = 4;
    for (const Lock* l : locks)
        keyW = std::max(keyW, std::min<size_t>(l->key.size(), 48));
    std::ostringstream out;
    char buf[256];
    std::snprintf(buf, sizeof buf, "%-*s  %-12s %10s %11s %10s %10s\n", int(keyW), "lock", "type",
                  "contended", "total wait", "max", "avg");
    out << buf;
    for (const Lock* l : locks) {
        std::string key = l->key.size() > keyW ? l->key.substr(0, keyW - 3) + "..." : l->key;
        std::snprintf(buf, sizeof buf, "%-*s  %-12s %10" PRIu64 " %11s %10s %10s\n", int(keyW),
                      key.c_str(), l->type.c_str(), l->wait.count(), units::duration(double(l->wait.total())).c_str(),
                      units::duration(double(l->wait.max())).c_str(), units::duration(double(l->wait.mean())).c_str());
        out << buf;
    }
    if (locks.empty())
        out << "(no contended locks seen)\n";
    return out.str();
}

} // namespace lockscope::reports
