// SPDX-License-Identifier: GPL-2.0-or-later
#include "lockscope/record/user_symbols.h"

#include <bcc/bcc_syms.h>
#include <elf.h>

namespace lockscope::record {

UserSymbols::~UserSymbols()
{
    for (auto& [pid, cache] : caches_)
        if (cache)
            bcc_free_symcache(cache, pid);
}

void UserSymbols::prepare(pid_t pid)
{
    auto it = caches_.find(pid);
    if (it != caches_.end() && it->second) {
        bcc_symcache_refresh(it->second);
        return;
    }
    bcc_symbol_option opt{};
    opt.use_debug_file = 1;
    opt.check_debug_file_crc = 1;
    opt.lazy_symbolize = 1;
    opt.use_symbol_type = (1u << STT_FUNC) | (1u << STT_GNU_IFUNC);
    caches_[pid] = bcc_symcache_new(pid, &opt);
}

Frame UserSymbols::resolve(pid_t pid, uint64_t address)
{
    Frame f;
    f.address = address;
    auto it = caches_.find(pid);
    if (it == caches_.end()) {
        prepare(pid);
        it = caches_.find(pid);
    }
    if (!it->second)
        return f;
    bcc_symbol sym{};
    if (bcc_symcache_resolve(it->second, address, &sym) == 0) {
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

} // namespace lockscope::record
