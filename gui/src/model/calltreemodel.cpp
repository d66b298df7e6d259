// SPDX-License-Identifier: GPL-2.0-or-later
#include "model/calltreemodel.h"

#include "model/roles.h"
#include "model/units.h"

template class lockscope::gui::TreeModel<lockscope::gui::CallTreeTraits>;

namespace lockscope::gui {

namespace {
double share(uint64_t part, uint64_t whole)
{
    return whole ? static_cast<double>(part) / static_cast<double>(whole) : 0.0;
}
} // namespace

QVariant CallTreeTraits::header(int column, int role)
{
    static const char* const names[ColumnCount] = {"Function", "Module", "Count",  "Wait",
                                                   "Wait %",   "Hold",   "Hold %", "Self wait"};
    static const char* const tips[ColumnCount] = {
        "Kernel function (offsets stripped so trees from two builds line up)",
        "Module, empty for vmlinux",
        "Lock events whose stack passes through this frame",
        "Total wait time of the events through this frame (inclusive)",
        "Inclusive wait as a share of the whole tree",
        "Total hold time of the events through this frame (inclusive)",
        "Inclusive hold as a share of the whole tree",
        "Wait time of events whose stack ends at this frame"};
    if (role == Qt::DisplayRole)
        return QString::fromUtf8(names[column]);
    if (role == Qt::ToolTipRole)
        return QString::fromUtf8(tips[column]);
    return {};
}

QVariant CallTreeTraits::data(const Tree& t, uint32_t id, int column, int role)
{
    const CallTree::Node& n = t.node(id);
    const Weights& all = t.root().total;
    const bool display = role == Qt::DisplayRole;
    if (role == NodeIdRole)
        return id;
    if (role == Qt::TextAlignmentRole)
        return column <= Module ? QVariant() : QVariant(Qt::AlignRight | Qt::AlignVCenter);
    if (role == FractionRole) {
        if (column == Wait || column == WaitPercent)
            return share(n.total.wait_ns, all.wait_ns);
        if (column == Hold || column == HoldPercent)
            return share(n.total.hold_ns, all.hold_ns);
        return {};
    }
    const auto& [function, module] = t.frameName(n.frame);
    if (role == Qt::ToolTipRole && column == Function)
        return plainToolTip(fromStd(function)
            + (module.empty() ? QString() : QStringLiteral(" [") + fromStd(module) + QLatin1Char(']')));
    if (!display && role != SortRole)
        return {};
    auto ns = [display](uint64_t v) -> QVariant { return display ? QVariant(formatNs(v)) : QVariant(qulonglong(v)); };
    auto pct = [display](double v) -> QVariant { return display ? QVariant(formatPercent(v)) : QVariant(v); };
    switch (column) {
    case Function:
        return fromStd(function);
    case Module:
        return fromStd(module);
    case Count:
        return display ? QVariant(formatCount(n.total.count)) : QVariant(qulonglong(n.total.count));
    case Wait:
        return ns(n.total.wait_ns);
    case WaitPercent:
        return pct(share(n.total.wait_ns, all.wait_ns));
    case Hold:
        return ns(n.total.hold_ns);
    case HoldPercent:
        return pct(share(n.total.hold_ns, all.hold_ns));
    case SelfWait:
        return ns(t.self(id).wait_ns);
    default:
        return {};
    }
}

} // namespace lockscope::gui
