// SPDX-License-Identifier: GPL-2.0-or-later
#include "lockscope/capture/calltree.h"

#include "lockscope/capture/site_shares.h"

#include <cstdio>
#include <stdexcept>

namespace lockscope {

Weights& Weights::operator+=(const Weights& o) noexcept
{
    count = saturatingAdd(count, o.count);
    wait_ns = saturatingAdd(wait_ns, o.wait_ns);
    hold_ns = saturatingAdd(hold_ns, o.hold_ns);
    return *this;
}

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
}

size_t FrameNameHash::operator()(const FrameName& name) const noexcept
{
    return mix64(std::hash<InternedString>()(name.first) ^ mix64(std::hash<InternedString>()(name.second)));
}

uint32_t CallTree::findChild(uint32_t parent, InternedString function, InternedString module) const
{
    const auto frame = frameIds_.find(FrameName(function, module));
    if (frame == frameIds_.end())
        return kRoot;
    return childIndex_.find(childKey(parent, frame->second)).value_or(kRoot);
}

uint32_t CallTree::childFor(uint32_t parent, InternedString function, InternedString module)
{
    const auto frame = frameIds_.try_emplace(FrameName(function, module), uint32_t(frameIds_.size())).first;
    const auto next = static_cast<uint32_t>(nodes_.size());
    const auto [id, inserted] = childIndex_.tryEmplace(childKey(parent, frame->second), next);
    if (!inserted)
        return id;
    Node n;
    n.function = frame->first.first;
    n.module = frame->first.second;
    n.parent = parent;
    nodes_.push_back(std::move(n));
    nodes_[parent].children.push_back(id);
    return id;
}

void CallTree::addStack(const std::vector<Frame>& frames, const Weights& w)
{
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
    nodes_[cur].self += w;
}

void CallTree::mergeNode(const CallTree& other, uint32_t otherId, uint32_t mine)
{
    const Node& src = other.nodes_[otherId];
    nodes_[mine].self += src.self;
    nodes_[mine].total += src.total;
    for (uint32_t c : src.children) {
        const Node& child = other.nodes_[c];
        const uint32_t target = childFor(mine, child.function, child.module);
        mergeNode(other, c, target);
    }
}

void CallTree::merge(const CallTree& other)
{
    if (other.direction_ != direction_)
        throw std::invalid_argument("CallTree::merge: trees of different directions");
    mergeNode(other, kRoot, kRoot);
}

CallTree CallTree::forLock(const Capture& capture, const Lock& lock, TreeDirection direction)
{
    CallTree tree(direction);
    addLock(tree, StackIndex(capture), lock);
    return tree;
}

CallTree CallTree::forCapture(const Capture& capture, TreeDirection direction)
{
    CallTree tree(direction);
    const StackIndex index(capture);
    for (const auto& lock : capture.locks)
        addLock(tree, index, lock);
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
