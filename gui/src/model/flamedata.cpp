// SPDX-License-Identifier: GPL-2.0-or-later
#include "model/flamedata.h"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <unordered_map>

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

size_t FlameData::size() const noexcept
{
    return tree ? tree->size() : diff ? diff->nodes.size() : 0;
}

uint32_t FlameData::parent(uint32_t id) const noexcept
{
    return tree ? tree->node(id).parent : diff->nodes[id].parent;
}

std::span<const uint32_t> FlameData::children(uint32_t id) const
{
    if (id >= size() || childIds.empty())
        return {};
    const std::span<const uint32_t> kids = tree ? tree->children(id) : diff->children(id);
    const std::span<const uint32_t> all = tree ? tree->children(0) : diff->children(0);
    return { childIds.data() + (kids.data() - all.data()), kids.size() };
}

uint32_t FlameData::frameOf(uint32_t id) const noexcept
{
    return tree ? tree->node(id).frame : diff->nodes[id].frame;
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

double pick(const reports::DiffNode& n, FlameWeight weight, bool after)
{
    switch (weight) {
    case FlameWeight::Wait:
        return static_cast<double>(after ? n.after_wait_ns : n.before_wait_ns);
    case FlameWeight::Hold:
        return static_cast<double>(after ? n.after_hold_ns : n.before_hold_ns);
    case FlameWeight::Count:
        return static_cast<double>(after ? n.after_count : n.before_count);
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

// The tree's child array, each node's part sorted by name.
template <class Tree> void layOutSortedChildren(FlameData& data, const Tree& tree)
{
    const size_t size = data.size();
    data.childIds.clear();
    data.childIds.reserve(size ? size - 1 : 0);
    for (size_t id = 0; id < size; ++id) {
        const auto kids = tree.children(static_cast<uint32_t>(id));
        const auto first = static_cast<std::ptrdiff_t>(data.childIds.size());
        data.childIds.insert(data.childIds.end(), kids.begin(), kids.end());
        std::sort(data.childIds.begin() + first, data.childIds.end(),
            [&data](uint32_t a, uint32_t b) { return data.function(a) < data.function(b); });
    }
}
} // namespace

double FlameData::value(uint32_t id) const noexcept
{
    if (tree)
        return pick(tree->node(id).total, weight);
    return pick(diff->nodes[id], weight, !widthsFromBefore);
}

double FlameData::before(uint32_t id) const noexcept
{
    return differential() ? pick(diff->nodes[id], weight, false) : 0.0;
}

double FlameData::after(uint32_t id) const noexcept
{
    return differential() ? pick(diff->nodes[id], weight, true) : value(id);
}

FlameData flameFromCallTree(std::shared_ptr<const CallTree> tree, FlameWeight weight)
{
    FlameData data;
    data.weight = weight;
    NameIds names(data.names);
    // The graph numbers frames as the tree does.
    addRootFrame(data, names);
    for (uint32_t frame = 1; frame < tree->frameCount(); ++frame) {
        const auto& [function, module] = tree->frameName(frame);
        data.frames.push_back(FlameFrame { names(function), names(module) });
    }
    data.tree = std::move(tree);
    layOutSortedChildren(data, *data.tree);
    return data;
}

uint32_t flameNodeOnPath(const FlameData& data, const std::vector<std::string>& frameLabels)
{
    uint32_t at = 0;
    if (data.size() == 0)
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

FlameData flameFromDiffTree(
    std::shared_ptr<const reports::DiffTree> tree, FlameWeight weight, bool widthsFromBefore)
{
    FlameData data;
    data.weight = weight;
    data.widthsFromBefore = widthsFromBefore;
    NameIds names(data.names);
    addRootFrame(data, names);
    // The graph numbers frames as the tree does.
    for (size_t frame = 1; frame < tree->frames.size(); ++frame)
        data.frames.push_back(
            FlameFrame { names(tree->frames[frame].function), names(tree->frames[frame].module) });
    data.diff = std::move(tree);
    layOutSortedChildren(data, *data.diff);
    return data;
}

FlameSearch searchFlame(const FlameData& data, const QString& text)
{
    FlameSearch result;
    result.matched.assign(data.size(), false);
    if (text.isEmpty() || data.size() == 0)
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
        const bool hit = id != 0 && frameHit[data.frameOf(id)];
        result.matched[id] = hit;
        if (hit && !underMatch)
            covered += data.value(id);
        for (uint32_t c : data.children(id))
            todo.emplace_back(c, underMatch || hit);
    }
    const double total = data.value(0);
    result.coveredShare = total > 0.0 ? covered / total : 0.0;
    return result;
}

} // namespace lockscope::gui
