// SPDX-License-Identifier: GPL-2.0-or-later
#pragma once

#include "lockscope/capture/calltree.h"
#include "model/treemodel.h"

namespace lockscope::gui {

// Cells of a lockscope::CallTree. The same traits serve top-down and
// bottom-up trees; only the header of the first column says which.
struct CallTreeTraits {
    using Tree = CallTree;
    enum Column { Function, Module, Count, Wait, WaitPercent, Hold, HoldPercent, SelfWait, ColumnCount };

    static size_t size(const Tree& t) { return t.size(); }
    static std::span<const uint32_t> children(const Tree& t, uint32_t id) { return t.children(id); }
    static uint32_t parent(const Tree& t, uint32_t id) { return t.node(id).parent; }
    static int columnCount() { return ColumnCount; }
    static QVariant header(int column, int role);
    static QVariant data(const Tree& t, uint32_t id, int column, int role);
};

using CallTreeModel = TreeModel<CallTreeTraits>;

} // namespace lockscope::gui

extern template class lockscope::gui::TreeModel<lockscope::gui::CallTreeTraits>;
