// SPDX-License-Identifier: GPL-2.0-or-later
#include "lockscope/record/user_symbols.h"

#include "lockscope/record/workload.h"

#include <algorithm>
#include <utility>

#include <bcc/bcc_syms.h>
#include <elf.h>

namespace lockscope::record {

UserSymbols::UserSymbols(size_t maxCaches)
    : maxCaches_(std::max<size_t>(maxCaches, 1))
{
}

UserSymbols::~UserSymbols()
{
    for (auto& [pid, cache] : caches_)
        if (cache.syms)
            bcc_free_symcache(cache.syms, pid);
}

void UserSymbols::prepare(pid_t pid)
{
    auto it = caches_.find(pid);
    if (it != caches_.end()) {
        it->second.lastUse = ++clock_;
        if (it->second.syms && !it->second.final)
            bcc_symcache_refresh(it->second.syms);
        return;
    }
    if (!processExists(pid)) {
        // Gone before it could be read: nothing to cache, and nothing to retry.
        retired_.try_emplace(pid);
        return;
    }
    if (caches_.size() >= maxCaches_)
        dropLeastRecentlyUsed();
    bcc_symbol_option opt{};
    opt.use_debug_file = 1;
    opt.check_debug_file_crc = 1;
    opt.lazy_symbolize = 1;
    opt.use_symbol_type = (1u << STT_FUNC) | (1u << STT_GNU_IFUNC);
    caches_[pid] = Cache{bcc_symcache_new(pid, &opt), ++clock_, false};
    retired_.erase(pid); // a new process under a reused pid
}

void UserSymbols::prepareLastTime(pid_t pid)
{
    prepare(pid);
    if (auto it = caches_.find(pid); it != caches_.end())
        it->second.final = true;
}

void UserSymbols::dropLeastRecentlyUsed()
{
    auto oldest = std::min_element(caches_.begin(), caches_.end(), [](const auto& a, const auto& b) {
        return a.second.lastUse < b.second.lastUse;
    });
    if (oldest == caches_.end())
        return;
    if (!processExists(oldest->first))
        ++lostExited_;
    if (oldest->second.syms)
        bcc_free_symcache(oldest->second.syms, oldest->first);
    caches_.erase(oldest);
}

Frame UserSymbols::lookup(void* syms, uint64_t address) const
{
    Frame f;
    f.address = address;
    if (!syms)
        return f;
    bcc_symbol sym{};
    if (bcc_symcache_resolve(syms, address, &sym) == 0) {
        if (sym.demangle_name && *sym.demangle_name)
            f.function = sym.demangle_name;
        else if (sym.name)
            f.function = sym.name;
        f.offset = sym.offset;
        if (sym.module)
            f.module = sym.module;
        bcc_symbol_free_demangle_name(&sym);
    } else if (sym.module) {
        // Known mapping, unknown symbol: keep the binary and its offset.
        f.module = sym.module;
        f.offset = sym.offset;
    }
    return f;
}

Frame UserSymbols::resolve(pid_t pid, uint64_t address)
{
    if (auto r = retired_.find(pid); r != retired_.end()) {
        auto f = r->second.find(address);
        if (f != r->second.end())
            return f->second;
        Frame unknown;
        unknown.address = address;
        return unknown;
    }
    auto it = caches_.find(pid);
    if (it == caches_.end()) {
        prepare(pid);
        it = caches_.find(pid);
        if (it == caches_.end()) // the process is gone
            return lookup(nullptr, address);
    }
    it->second.lastUse = ++clock_;
    return lookup(it->second.syms, address);
}

void UserSymbols::retire(pid_t pid, const std::vector<uint64_t>& addresses)
{
    auto it = caches_.find(pid);
    if (it == caches_.end())
        return;
    auto& frames = retired_[pid];
    // Only what resolved: resolve() gives the bare address for the rest.
    for (uint64_t a : addresses)
        if (!frames.count(a))
            if (Frame f = lookup(it->second.syms, a); !f.function.empty() || !f.module.empty())
                frames.emplace(a, std::move(f));
    if (it->second.syms)
        bcc_free_symcache(it->second.syms, pid);
    caches_.erase(it);
}

} // namespace lockscope::record
