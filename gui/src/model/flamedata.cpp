// SPDX-License-Identifier: GPL-2.0-or-later
#include "model/flamedata.h"

#include <algorithm>
#include <cmath>
#include <unordered_map>

#include "lockscope/capture/child_lists.h"
#include "lockscope/reports/compare.h"
#include "model/units.h"

namespace lockscope::gui {

QString toDisplayString(FlameWeight w)
{
    switch (w) {
    case FlameWeight::Wait:
        return QStringLiteral("wait time");
    case FlameWeight::Hold:
        return QStringLiteral("hold time");
    case FlameWeight::Count:
        return QStringLiteral("count");
    }
    return {};
}

double FlameData::relativeChange(uint32_t id) const noexcept
{
    const double was = before(id);
    const double is = after(id);
    const double larger = std::max(was, is);
    return larger > 0.0 ? (is - was) / larger : 0.0;
}

namespace {
double pick(const Weights& w, FlameWeight weight)
{
    switch (weight) {
    case FlameWeight::Wait:
        return static_cast<double>(w.wait_ns);
    case FlameWeight::Hold:
        return static_cast<double>(w.hold_ns);
    case FlameWeight::Count:
        return static_cast<double>(w.count);
    }
    return 0.0;
}

// A tree has a few thousand distinct frame names over its 300k nodes: each
// name once in FlameData::names, a frame holding its indices.
class NameIds {
public:
    explicit NameIds(std::vector<QString>& names) : names_(names)
    {
        names_.assign(1, QString());
        ids_.emplace(InternedString(), 0);
    }
    uint32_t operator()(InternedString name)
    {
        auto [it, inserted] = ids_.try_emplace(name, static_cast<uint32_t>(names_.size()));
        if (inserted)
            names_.push_back(fromStd(name));
        return it->second;
    }
    uint32_t operator()(const QString& name)
    {
        names_.push_back(name);
        return static_cast<uint32_t>(names_.size() - 1);
    }

private:
    std::vector<QString>& names_;
    std::unordered_map<InternedString, uint32_t> ids_;
};

// frames[0] is the root's: "all".
void addRootFrame(FlameData& data, NameIds& names)
{
    data.frames.assign(1, FlameFrame { names(QStringLiteral("all")), 0 });
}

void layOutSortedChildren(FlameData& data)
{
    layOutChildren(data.nodes, data.childBegin, data.childIds);
    for (size_t id = 0; id < data.nodes.size(); ++id) {
        std::sort(data.childIds.begin() + data.childBegin[id], data.childIds.begin() + data.childBegin[id + 1],
                  [&data](uint32_t a, uint32_t b) { return data.function(a) < data.function(b); });
    }
}
} // namespace

FlameData flameFromCallTree(const CallTree& tree, FlameWeight weight)
{
    FlameData data;
    data.weight = weight;
    NameIds names(data.names);
    // The graph numbers frames as the tree does.
    addRootFrame(data, names);
    for (uint32_t frame = 1; frame < tree.frameCount(); ++frame) {
        const auto& [function, module] = tree.frameName(frame);
        data.frames.push_back(FlameFrame { names(function), names(module) });
    }
    data.nodes.resize(tree.size());
    for (uint32_t id = 0; id < tree.size(); ++id) {
        const CallTree::Node& src = tree.node(id);
        data.nodes[id] = FlameNode { src.frame, src.parent, pick(src.total, weight) };
    }
    layOutSortedChildren(data);
    return data;
}

uint32_t flameNodeOnPath(const FlameData& data, const std::vector<std::string>& frameLabels)
{
    uint32_t at = 0;
    if (data.nodes.empty())
        return at;
    auto label = [&data](uint32_t id) {
        const QString& module = data.module(id);
        return module.isEmpty() ? data.function(id) : data.function(id) + QStringLiteral(" [") + module + QLatin1Char(']');
    };
    for (const auto& frame : frameLabels) {
        const QString want = QString::fromStdString(frame);
        const auto kids = data.children(at);
        const auto next = std::find_if(kids.begin(), kids.end(), [&](uint32_t c) { return label(c) == want; });
        if (next == kids.end())
            break;
        at = *next;
    }
    return at;
}

FlameData flameFromDiffTree(const reports::DiffTree& tree, FlameWeight weight, bool widthsFromBefore)
{
    FlameData data;
    data.weight = weight;
    data.differential = true;
    data.nodes.resize(tree.nodes.size());
    data.sides.resize(tree.nodes.size());
    NameIds names(data.names);
    addRootFrame(data, names);
    std::unordered_map<FrameName, uint32_t, FrameNameHash> frameIds;
    for (size_t id = 0; id < tree.nodes.size(); ++id) {
        const reports::DiffNode& src = tree.nodes[id];
        FlameNode& n = data.nodes[id];
        if (id > 0) {
            const auto [frame, inserted] = frameIds.try_emplace(
                FrameName(src.function, src.module), static_cast<uint32_t>(data.frames.size()));
            if (inserted)
                data.frames.push_back(FlameFrame { names(src.function), names(src.module) });
            n.frame = frame->second;
        }
        n.parent = src.parent;
        FlameSides& sides = data.sides[id];
        switch (weight) {
        case FlameWeight::Wait:
            sides = { static_cast<double>(src.before_wait_ns), static_cast<double>(src.after_wait_ns) };
            break;
        case FlameWeight::Hold:
            sides = { static_cast<double>(src.before_hold_ns), static_cast<double>(src.after_hold_ns) };
            break;
        case FlameWeight::Count:
            sides = { static_cast<double>(src.before_count), static_cast<double>(src.after_count) };
            break;
        }
        n.value = widthsFromBefore ? sides.before : sides.after;
    }
    layOutSortedChildren(data);
    return data;
}

FlameSearch searchFlame(const FlameData& data, const QString& text)
{
    FlameSearch result;
    result.matched.assign(data.nodes.size(), false);
    if (text.isEmpty() || data.nodes.empty())
        return result;
    // Each distinct frame is matched once, not once per node.
    std::vector<bool> frameHit(data.frames.size());
    for (size_t i = 0; i < data.frames.size(); ++i)
        frameHit[i] = data.names[data.frames[i].function].contains(text, Qt::CaseInsensitive);
    double covered = 0.0;
    // Depth-first from the root; a match covers its whole subtree, so nested
    // matches below it are marked but not counted again.
    std::vector<std::pair<uint32_t, bool>> todo{{0, false}};
    while (!todo.empty()) {
        auto [id, underMatch] = todo.back();
        todo.pop_back();
        const FlameNode& n = data.nodes[id];
        const bool hit = id != 0 && frameHit[n.frame];
        result.matched[id] = hit;
        if (hit && !underMatch)
            covered += n.value;
        for (uint32_t c : data.children(id))
            todo.emplace_back(c, underMatch || hit);
    }
    const double total = data.nodes.front().value;
    result.coveredShare = total > 0.0 ? covered / total : 0.0;
    return result;
}

} // namespace lockscope::gui
