// SPDX-License-Identifier: GPL-2.0-or-later
#include "lockscope/scaling/id_table.h"

#include <algorithm>
#include <shared_mutex>
#include <unordered_map>

namespace lockscope::scaling {

namespace {

// Slots as an idr: ids are slot indexes, freed slots are reused lowest-first.
class IdSlots {
public:
    int allocate(int32_t key)
    {
        size_t i = 0;
        if (free_.empty()) {
            i = slots_.size();
            slots_.push_back({});
        } else {
            std::pop_heap(free_.begin(), free_.end(), std::greater<>());
            i = free_.back();
            free_.pop_back();
        }
        slots_[i] = {key, true};
        ++used_;
        return static_cast<int>(i);
    }
    bool release(int id)
    {
        if (id < 0 || static_cast<size_t>(id) >= slots_.size() || !slots_[static_cast<size_t>(id)].used)
            return false;
        slots_[static_cast<size_t>(id)].used = false;
        free_.push_back(static_cast<size_t>(id));
        std::push_heap(free_.begin(), free_.end(), std::greater<>());
        --used_;
        return true;
    }
    struct Slot {
        int32_t key = 0;
        bool used = false;
    };
    const std::vector<Slot>& slots() const { return slots_; }
    int32_t keyOf(int id) const { return slots_[static_cast<size_t>(id)].key; }

private:
    std::vector<Slot> slots_;
    std::vector<size_t> free_;
    size_t used_ = 0;
};

class TableBase : public IdTable {
public:
    explicit TableBase(LockProfile* p) : rwsem_(p) {}

    int getOrCreate(int32_t key) override
    {
        Guard g(rwsem_);
        if (auto id = lookup(key))
            return *id;
        int id = slots_.allocate(key);
        inserted(key, id);
        return id;
    }
    std::optional<int> find(int32_t key) override
    {
        Guard g(rwsem_);
        return lookup(key);
    }
    bool remove(int id) override
    {
        Guard g(rwsem_);
        if (id < 0 || static_cast<size_t>(id) >= slots_.slots().size() ||
            !slots_.slots()[static_cast<size_t>(id)].used)
            return false;
        removed(slots_.keyOf(id));
        return slots_.release(id);
    }
    std::vector<std::pair<int32_t, int>> contents() const override
    {
        SharedGuard g(rwsem_);
        std::vector<std::pair<int32_t, int>> out;
        for (size_t i = 0; i < slots_.slots().size(); ++i)
            if (slots_.slots()[i].used)
                out.emplace_back(slots_.slots()[i].key, static_cast<int>(i));
        std::sort(out.begin(), out.end());
        return out;
    }

protected:
    virtual std::optional<int> lookup(int32_t key) const = 0;
    virtual void inserted(int32_t key, int id) = 0;
    virtual void removed(int32_t key) = 0;
    IdSlots slots_;

private:
    mutable Instrumented<std::shared_mutex> rwsem_;
};

class LinearTable final : public TableBase {
public:
    using TableBase::TableBase;

protected:
    std::optional<int> lookup(int32_t key) const override
    {
        const auto& s = slots_.slots();
        for (size_t i = 0; i < s.size(); ++i)
            if (s[i].used && s[i].key == key)
                return static_cast<int>(i);
        return std::nullopt;
    }
    void inserted(int32_t, int) override {}
    void removed(int32_t) override {}
};

class HashTable final : public TableBase {
public:
    using TableBase::TableBase;

protected:
    std::optional<int> lookup(int32_t key) const override
    {
        auto it = index_.find(key);
        if (it == index_.end())
            return std::nullopt;
        return it->second;
    }
    void inserted(int32_t key, int id) override { index_.emplace(key, id); }
    void removed(int32_t key) override { index_.erase(key); }

private:
    std::unordered_map<int32_t, int> index_;
};

} // namespace

std::unique_ptr<IdTable> makeIdTable(Variant variant, LockProfile* profile)
{
    if (variant == Variant::Before)
        return std::make_unique<LinearTable>(profile);
    return std::make_unique<HashTable>(profile);
}

} // namespace lockscope::scaling
