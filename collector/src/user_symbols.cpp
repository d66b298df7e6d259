// SPDX-License-Identifier: GPL-2.0-or-later
#include "lockscope/record/user_symbols.h"

#include "lockscope/record/workload.h"
#include "lockscope/util/libbcc.h"

#include <algorithm>
#include <utility>

#include <bcc/bcc_syms.h>
#include <dlfcn.h>
#include <elf.h>

namespace lockscope::record {

namespace {

// libbcc brings libLLVM and libclang-cpp with it: linked, their loading and
// relocation took ~80 ms of every lockscope command. It is opened on the
// first user stack to symbolize instead.
struct Bcc {
    decltype(&bcc_symcache_new) symcache_new = nullptr;
    decltype(&bcc_free_symcache) free_symcache = nullptr;
    decltype(&bcc_symcache_refresh) symcache_refresh = nullptr;
    decltype(&bcc_symcache_resolve) symcache_resolve = nullptr;
    decltype(&bcc_symbol_free_demangle_name) free_demangle_name = nullptr;
    std::string error; // why it could not be loaded; empty when loaded
};

template <typename F>
bool bind(void* lib, const char* name, F& fn)
{
    fn = reinterpret_cast<F>(dlsym(lib, name));
    return fn != nullptr;
}

const Bcc& bcc()
{
    static const Bcc loaded = [] {
        Bcc b;
        void* lib = dlopen(util::kLibbccSoname, RTLD_NOW | RTLD_LOCAL);
        if (!lib) {
            const char* e = dlerror();
            b.error = e ? e : "dlopen failed";
            return b;
        }
        if (!bind(lib, "bcc_symcache_new", b.symcache_new) || !bind(lib, "bcc_free_symcache", b.free_symcache) ||
            !bind(lib, "bcc_symcache_refresh", b.symcache_refresh) ||
            !bind(lib, "bcc_symcache_resolve", b.symcache_resolve) ||
            !bind(lib, "bcc_symbol_free_demangle_name", b.free_demangle_name))
            b.error = std::string(util::kLibbccSoname) + " lacks a bcc_syms.h function";
        return b;
    }();
    return loaded;
}

} // namespace

const std::string& UserSymbols::unavailable()
{
    return bcc().error;
}

UserSymbols::UserSymbols(size_t maxCaches)
    : maxCaches_(std::max<size_t>(maxCaches, 1))
{
}

UserSymbols::~UserSymbols()
{
    for (auto& [pid, cache] : caches_)
        if (cache.syms)
            bcc().free_symcache(cache.syms, pid);
}

void UserSymbols::prepare(pid_t pid)
{
    auto it = caches_.find(pid);
    if (it != caches_.end()) {
        it->second.lastUse = ++clock_;
        if (it->second.syms && !it->second.final)
            bcc().symcache_refresh(it->second.syms);
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
    // Without libbcc every frame keeps its bare address (unavailable() says why).
    caches_[pid] = Cache{bcc().error.empty() ? bcc().symcache_new(pid, &opt) : nullptr, ++clock_, false};
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
        bcc().free_symcache(oldest->second.syms, oldest->first);
    caches_.erase(oldest);
}

Frame UserSymbols::lookup(void* syms, uint64_t address) const
{
    Frame f;
    f.address = address;
    if (!syms)
        return f;
    bcc_symbol sym{};
    if (bcc().symcache_resolve(syms, address, &sym) == 0) {
        if (sym.demangle_name && *sym.demangle_name)
            f.function = sym.demangle_name;
        else if (sym.name)
            f.function = sym.name;
        f.offset = sym.offset;
        if (sym.module)
            f.module = sym.module;
        bcc().free_demangle_name(&sym);
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
        bcc().free_symcache(it->second.syms, pid);
    caches_.erase(it);
}

void UserSymbols::forgetExited()
{
    for (auto it = caches_.begin(); it != caches_.end();) {
        if (processExists(it->first)) {
            ++it;
            continue;
        }
        if (it->second.syms)
            bcc().free_symcache(it->second.syms, it->first);
        it = caches_.erase(it);
    }
    retired_.clear();
}

} // namespace lockscope::record
