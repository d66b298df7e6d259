// SPDX-License-Identifier: GPL-2.0-or-later
#include "lockscope/util/interned_string.h"

#include <array>
#include <atomic>
#include <mutex>
#include <ostream>
#include <thread>
#include <unordered_set>

namespace lockscope {
namespace {

struct Hash {
    using is_transparent = void;
    size_t operator()(std::string_view s) const noexcept { return std::hash<std::string_view>()(s); }
};

// A spin lock, not a std::mutex: a name is interned per frame, and with
// `lockscope agent --user-locks` every pthread_mutex_lock and unlock of the
// agent's own traps into its uprobes (they are on libc's, for every process).
// The critical section is one lookup in a shard's set.
class SpinLock {
public:
    void lock() noexcept
    {
        while (held_.exchange(true, std::memory_order_acquire))
            while (held_.load(std::memory_order_relaxed))
                std::this_thread::yield();
    }
    void unlock() noexcept { held_.store(false, std::memory_order_release); }

private:
    std::atomic<bool> held_ { false };
};

// Sharded so that captures loaded on both cores at once (compare's run
// sets, the GUI's loader thread) rarely wait on each other. Node-based
// sets keep every string's address for the process's life; the pool only
// grows, by the distinct names a process meets (symbols, module paths).
struct Pool {
    struct Shard {
        SpinLock lock;
        std::unordered_set<std::string, Hash, std::equal_to<>> strings;
    };
    std::array<Shard, 16> shards;
};

Pool& pool()
{
    static auto* p = new Pool; // never destroyed: strings outlive every static that holds one
    return *p;
}

const std::string& emptyString()
{
    static const auto* e = new std::string;
    return *e;
}

} // namespace

InternedString::InternedString() noexcept : s_(&emptyString()) {}

InternedString::InternedString(std::string_view s) : s_(&emptyString())
{
    if (s.empty())
        return;
    const size_t h = Hash()(s);
    Pool::Shard& shard = pool().shards[h % pool().shards.size()];
    const std::lock_guard<SpinLock> hold(shard.lock);
    auto it = shard.strings.find(s);
    if (it == shard.strings.end())
        it = shard.strings.emplace(s).first;
    s_ = &*it;
}

std::ostream& operator<<(std::ostream& os, InternedString s) { return os << s.str(); }

} // namespace lockscope
