// SPDX-License-Identifier: GPL-2.0-or-later
#pragma once

#include <cstddef>

#include <QString>
#include <QVariant>

namespace lockscope::gui {

// headerData() of a table whose columns each have a fixed name and tooltip.
template <std::size_t N>
QVariant columnHeader(const char* const (&names)[N], const char* const (&tips)[N], int section,
                      Qt::Orientation orientation, int role)
{
    if (orientation != Qt::Horizontal || section < 0 || section >= static_cast<int>(N))
        return {};
    if (role == Qt::DisplayRole)
        return QString::fromUtf8(names[section]);
    if (role == Qt::ToolTipRole)
        return QString::fromUtf8(tips[section]);
    return {};
}

} // namespace lockscope::gui
