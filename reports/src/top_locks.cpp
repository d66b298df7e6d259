// SPDX-License-Identifier: GPL-2.0-or-later
#include <algorithm>

#include "format_util.h"
#include "lockscope/reports/render.h"

namespace lockscope::reports {

namespace {
std::vector<const Lock*> topLocks(const Capture& capture, size_t rows, bool contendedOnly)
{
    std::vector<const Lock*> locks;
    for (const auto& l : capture.locks)
        if (!contendedOnly || !l.wait.empty())
            locks.push_back(&l);
    const auto totalWait = lockColumn(LockColumn::TotalWait).value;
    std::stable_sort(locks.begin(), locks.end(), [&](const Lock* a, const Lock* b) {
        return totalWait(lockFigures(*a)) > totalWait(lockFigures(*b));
    });
    if (locks.size() > rows)
        locks.resize(rows);
    return locks;
}

// One line: the key and type left-aligned, each figure right-aligned.
template <typename Cell>
std::string line(const TopLocksLayout& layout, size_t keyW, Cell cell)
{
    std::string out = layout.indent;
    for (const LockColumn c : layout.columns) {
        const LockColumnSpec& spec = lockColumn(c);
        const std::string text = cell(spec);
        if (c == LockColumn::Key)
            out += fmt::padRight(text, keyW) + "  ";
        else if (c == LockColumn::Type)
            out += fmt::padRight(text, layout.type_width);
        else
            out += " " + fmt::padLeft(text, std::max(layout.figure_width, std::string(spec.brief).size() + 1));
    }
    return out + "\n";
}
} // namespace

std::string topLocksTable(const Capture& capture, size_t rows, const TopLocksLayout& layout)
{
    const std::vector<const Lock*> locks = topLocks(capture, rows, layout.contended_only);
    size_t keyW = 4;
    for (const Lock* l : locks)
        keyW = std::max(keyW, std::min(l->key.size(), layout.key_width));
    std::string out = line(layout, keyW, [](const LockColumnSpec& spec) { return std::string(spec.brief); });
    for (const Lock* l : locks) {
        const LockFigures f = lockFigures(*l);
        out += line(layout, keyW, [&](const LockColumnSpec& spec) {
            const std::string text = spec.cell(f, fmt::kPlain);
            return spec.id == LockColumn::Key && layout.cut_keys ? fmt::truncate(text, keyW) : text;
        });
    }
    if (locks.empty())
        out += "(no contended locks seen)\n";
    return out;
}

} // namespace lockscope::reports
