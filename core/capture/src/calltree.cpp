// SPDX-License-Identifier: GPL-2.0-or-later
#include "lockscope/capture/calltree.h"

#include "lockscope/capture/child_lists.h"
#include "lockscope/capture/site_shares.h"

#include <cstdio>
#include <string>
#include <stdexcept>

namespace lockscope {

Weights& Weights::operator+=(const Weights& o) noexcept
{
    count = saturatingAdd(count, o.count);
    wait_ns = saturatingAdd(wait_ns, o.wait_ns);
    hold_ns = saturatingAdd(hold_ns, o.hold_ns);
    return *this;
}

static_assert(sizeof(CallTree::Node) == 32, "calltree.h says why a node is 32 bytes");

namespace {
uint64_t childKey(uint32_t parent, uint32_t frame) noexcept { return uint64_t{parent} << 32 | frame; }

void addLock(CallTree& tree, const StackIndex& index, const Lock& lock)
{
    static const std::vector<Frame> kNoFrames;
    for (const SiteShare& site : shareOutUnsampled(lock, index).sites) {
        const Stack* stack = index.find(site.stack_id);
        tree.addStack(stack ? stack->frames : kNoFrames, Weights{site.count(), site.wait_ns, site.hold_ns});
    }
}
} // namespace

CallTree::CallTree(TreeDirection direction) : direction_(direction)
{
    nodes_.emplace_back(); // root
    frames_.emplace_back(); // the root's
}

size_t FrameNameHash::operator()(const FrameName& name) const noexcept
{
    return mix64(std::hash<InternedString>()(name.first) ^ mix64(std::hash<InternedString>()(name.second)));
}

uint32_t CallTree::findChild(uint32_t parent, InternedString function, InternedString module) const
{
    for (const uint32_t c : children(parent))
        if (frames_[nodes_[c].frame] == FrameName(function, module))
            return c;
    return kRoot;
}

Weights CallTree::self(uint32_t id) const
{
    Weights below;
    for (const uint32_t c : children(id))
        below += nodes_[c].total;
    const Weights& total = node(id).total;
    auto less = [](uint64_t a, uint64_t b) { return a > b ? a - b : 0; };
    return Weights { less(total.count, below.count), less(total.wait_ns, below.wait_ns),
        less(total.hold_ns, below.hold_ns) };
}

void CallTree::finishBuilding()
{
    frameIds_ = {};
    childIndex_ = FlatIndex();
}

void CallTree::indexNodes()
{
    if (!frameIds_.empty())
        return;
    for (size_t i = 0; i < frames_.size(); ++i)
        frameIds_.emplace(frames_[i], static_cast<uint32_t>(i));
    for (size_t i = 1; i < nodes_.size(); ++i)
        childIndex_.tryEmplace(childKey(nodes_[i].parent, nodes_[i].frame), static_cast<uint32_t>(i));
}

uint32_t CallTree::childFor(uint32_t parent, InternedString function, InternedString module)
{
    const auto [frame, newFrame]
        = frameIds_.try_emplace(FrameName(function, module), uint32_t(frames_.size()));
    if (newFrame)
        frames_.push_back(frame->first);
    const auto next = static_cast<uint32_t>(nodes_.size());
    const auto [id, inserted] = childIndex_.tryEmplace(childKey(parent, frame->second), next);
    if (!inserted)
        return id;
    Node n;
    n.frame = frame->second;
    n.parent = parent;
    nodes_.push_back(n);
    return id;
}

std::span<const uint32_t> CallTree::children(uint32_t id) const
{
    if (id >= nodes_.size())
        throw std::out_of_range("CallTree::children: no node " + std::to_string(id));
    if (children_.laidOutFor.load(std::memory_order_acquire) != nodes_.size()) {
        const std::lock_guard lock(children_.mutex);
        if (children_.laidOutFor.load(std::memory_order_relaxed) != nodes_.size())
            layOutChildren();
    }
    const uint32_t first = children_.begin[id];
    return { children_.ids.data() + first, children_.begin[id + 1] - first };
}

void CallTree::layOutChildren() const
{
    lockscope::layOutChildren(nodes_, children_.begin, children_.ids);
    children_.laidOutFor.store(nodes_.size(), std::memory_order_release);
}

void CallTree::addStack(const std::vector<Frame>& frames, const Weights& w)
{
    indexNodes();
    uint32_t cur = kRoot;
    nodes_[kRoot].total += w;
    auto step = [&](const Frame& f) {
        // Unresolved frames keep their address so distinct ones stay apart.
        if (f.function.empty())
            cur = childFor(cur, unresolvedFrameName(f), f.module);
        else
            cur = childFor(cur, f.function, f.module);
        nodes_[cur].total += w;
    };
    if (direction_ == TreeDirection::TopDown) {
        for (auto it = frames.rbegin(); it != frames.rend(); ++it)
            step(*it);
    } else {
        for (const auto& f : frames)
            step(f);
    }
}

void CallTree::mergeNode(const CallTree& other, uint32_t otherId, uint32_t mine)
{
    nodes_[mine].total += other.nodes_[otherId].total;
    for (uint32_t c : other.children(otherId)) {
        const FrameName& frame = other.frames_[other.nodes_[c].frame];
        mergeNode(other, c, childFor(mine, frame.first, frame.second));
    }
}

void CallTree::merge(const CallTree& other)
{
    if (other.direction_ != direction_)
        throw std::invalid_argument("CallTree::merge: trees of different directions");
    indexNodes();
    mergeNode(other, kRoot, kRoot);
}

CallTree CallTree::forLock(const Capture& capture, const Lock& lock, TreeDirection direction)
{
    CallTree tree(direction);
    addLock(tree, StackIndex(capture), lock);
    tree.finishBuilding();
    return tree;
}

CallTree CallTree::forCapture(const Capture& capture, TreeDirection direction)
{
    CallTree tree(direction);
    const StackIndex index(capture);
    for (const auto& lock : capture.locks)
        addLock(tree, index, lock);
    tree.finishBuilding();
    return tree;
}

std::string unresolvedFrameName(const Frame& f)
{
    if (!f.address)
        return "[unknown]";
    char buf[24];
    (void)snprintf(buf, sizeof buf, "0x%llx", static_cast<unsigned long long>(*f.address));
    return buf;
}

std::string frameLabel(const Frame& frame)
{
    std::string s = frame.function.empty() ? std::string("[unknown]") : frame.function.str();
    if (!frame.module.empty())
        s += " [" + frame.module.str() + "]";
    return s;
}

} // namespace lockscope
