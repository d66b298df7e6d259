// SPDX-License-Identifier: GPL-2.0-or-later
#include "interned_stacks.h"

#include <algorithm>
#include <cstdio>
#include <numeric>
#include <stdexcept>
#include <string>

#include "lockscope/capture/calltree.h"

namespace lockscope::reports {

FrameTable::FrameTable()
{
    noStackPath_ = pathId({labelId("[no stack]")});
}

FrameTable::FrameIds FrameTable::frameIds(InternedString name, InternedString module)
{
    auto it = byName_.find(FrameName(name, module));
    if (it != byName_.end())
        return it->second;
    const FrameIds ids{uint32_t(frames_.size()), labelId(frameLabel(Frame{name, 0, module, std::nullopt}))};
    frames_.push_back(TreeFrame{name, module});
    byName_.emplace(FrameName(name, module), ids);
    return ids;
}

uint32_t FrameTable::labelId(std::string label)
{
    auto [it, inserted] = labelIndex_.try_emplace(std::move(label), uint32_t(labels_.size()));
    if (inserted)
        labels_.push_back(it->first);
    return it->second;
}

uint32_t FrameTable::pathId(const std::vector<uint32_t>& labels)
{
    uint64_t h = labels.size();
    for (uint32_t l : labels)
        h = mix64(h ^ l) + 0x9e3779b97f4a7c15ull;
    if ((pathBegin_.size() + 1) * 2 > pathSlots_.size()) {
        std::vector<uint32_t> slots(std::max<size_t>(64, pathSlots_.size() * 2), UINT32_MAX);
        for (uint32_t p = 0; p < pathBegin_.size(); ++p) {
            size_t i = pathHash_[p] & (slots.size() - 1);
            while (slots[i] != UINT32_MAX)
                i = (i + 1) & (slots.size() - 1);
            slots[i] = p;
        }
        pathSlots_.swap(slots);
    }
    const size_t mask = pathSlots_.size() - 1;
    for (size_t i = h & mask;; i = (i + 1) & mask) {
        const uint32_t p = pathSlots_[i];
        if (p == UINT32_MAX) {
            const auto id = uint32_t(pathBegin_.size());
            pathSlots_[i] = id;
            pathBegin_.push_back(uint32_t(pathPool_.size()));
            pathSize_.push_back(uint32_t(labels.size()));
            pathHash_.push_back(h);
            pathPool_.insert(pathPool_.end(), labels.begin(), labels.end());
            return id;
        }
        if (pathHash_[p] == h && pathSize_[p] == labels.size() &&
            std::equal(labels.begin(), labels.end(), pathPool_.begin() + pathBegin_[p]))
            return p;
    }
}

uint32_t FrameTable::intern(const Stack* stack, std::vector<uint32_t>& out)
{
    if (!stack || stack->frames.empty())
        return noStackPath_;
    std::vector<uint32_t> labels;
    labels.reserve(stack->frames.size());
    for (auto it = stack->frames.rbegin(); it != stack->frames.rend(); ++it) {
        const Frame& f = *it;
        if (!f.function.empty()) {
            const FrameIds ids = frameIds(f.function, f.module);
            out.push_back(ids.tree);
            labels.push_back(ids.label);
        } else {
            // Unresolved: CallTree keeps the address apart, the path label does not.
            out.push_back(frameIds(unresolvedFrameName(f), f.module).tree);
            labels.push_back(labelId(frameLabel(f)));
        }
    }
    return pathId(labels);
}

std::vector<InternedString> FrameTable::pathLabels(uint32_t path) const
{
    std::vector<InternedString> out;
    out.reserve(pathSize_[path]);
    for (uint32_t i = 0; i < pathSize_[path]; ++i)
        out.push_back(labels_[pathPool_[pathBegin_[path] + i]]);
    return out;
}

void FrameTable::finishLabels()
{
    std::vector<uint32_t> order(labels_.size());
    std::iota(order.begin(), order.end(), 0u);
    std::sort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) { return labels_[a] < labels_[b]; });
    labelRank_.assign(labels_.size(), 0);
    for (uint32_t r = 0; r < order.size(); ++r)
        labelRank_[order[r]] = r;
}

bool FrameTable::pathLess(uint32_t a, uint32_t b) const
{
    const uint32_t* pa = pathPool_.data() + pathBegin_[a];
    const uint32_t* pb = pathPool_.data() + pathBegin_[b];
    return std::lexicographical_compare(pa, pa + pathSize_[a], pb, pb + pathSize_[b],
                                        [&](uint32_t x, uint32_t y) { return labelRank_[x] < labelRank_[y]; });
}

InternedCapture::InternedCapture(const Capture& capture, FrameTable& table)
    : capture_(capture), table_(table), index_(capture), entries_(capture.stacks.size() + 1),
      done_(capture.stacks.size() + 1, false)
{
}

size_t InternedCapture::position(const Stack* s) const
{
    return s ? size_t(s - capture_.stacks.data()) : capture_.stacks.size();
}

const InternedCapture::Entry& InternedCapture::interned(uint32_t stackId) const
{
    const size_t pos = position(index_.find(stackId));
    if (!done_[pos])
        throw std::logic_error("stack " + std::to_string(stackId) + " was not interned");
    return entries_[pos];
}

const InternedCapture::Entry& InternedCapture::stack(uint32_t stackId)
{
    const Stack* s = index_.find(stackId);
    const size_t pos = position(s);
    if (!done_[pos]) {
        Entry& e = entries_[pos];
        e.begin = uint32_t(pool_.size());
        e.path = table_.intern(s, pool_);
        e.size = uint32_t(pool_.size() - e.begin);
        done_[pos] = true;
    }
    return entries_[pos];
}

} // namespace lockscope::reports
