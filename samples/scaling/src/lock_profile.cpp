// SPDX-License-Identifier: GPL-2.0-or-later
#include "lockscope/scaling/lock_profile.h"

#include <atomic>

namespace lockscope::scaling {

namespace {

std::atomic<uint64_t> nextSerial{1};

struct CacheEntry {
    uint64_t serial;
    LockProfile::Slot* slot;
};

// Most threads touch a handful of lock classes; a short vector beats a map.
thread_local std::vector<CacheEntry> cache;

} // namespace

LockProfile::LockProfile(std::string name, std::string type)
    : name_(std::move(name)), type_(std::move(type)), serial_(nextSerial.fetch_add(1))
{
}

LockProfile::Slot& LockProfile::local()
{
    for (const auto& e : cache)
        if (e.serial == serial_)
            return *e.slot;
    Slot* slot = nullptr;
    {
        std::lock_guard<std::mutex> g(mutex_);
        slots_.push_back(std::make_unique<Slot>());
        slot = slots_.back().get();
    }
    cache.push_back({serial_, slot});
    return *slot;
}

Log2Hist LockProfile::wait() const
{
    std::lock_guard<std::mutex> g(mutex_);
    Log2Hist h;
    for (const auto& s : slots_)
        h.merge(s->wait);
    return h;
}

Log2Hist LockProfile::hold() const
{
    std::lock_guard<std::mutex> g(mutex_);
    Log2Hist h;
    for (const auto& s : slots_)
        h.merge(s->hold);
    return h;
}

} // namespace lockscope::scaling
