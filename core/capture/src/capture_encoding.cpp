// SPDX-License-Identifier: GPL-2.0-or-later
// The compact layout's symbol table, read and built.
#include "capture_encoding.h"

#include "lockscope/util/error_text.h"

namespace lockscope::detail {

std::vector<Symbol> symbolsFromJson(const json& arr, const Path& at)
{
    expectArray(arr, at);
    std::vector<Symbol> out;
    out.reserve(arr.size());
    for (size_t i = 0; i < arr.size(); ++i) {
        const Path p = at[i];
        const json& j = expectObject(arr[i], p);
        Symbol s;
        s.function = strAt(j, p, "function");
        s.module = strAt(j, p, "module");
        s.base = optionalAddressAt(j, p, "address");
        out.push_back(std::move(s));
    }
    return out;
}

uint32_t SymbolTable::idOf(const Frame& f)
{
    const auto base = symbolBase(f);
    std::string key;
    key.reserve(f.function.size() + f.module.size() + 20);
    key += f.function;
    key += '\0';
    key += f.module;
    key += '\0';
    if (base)
        key.append(reinterpret_cast<const char*>(&*base), sizeof *base);
    auto [it, fresh] = ids_.emplace(std::move(key), static_cast<uint32_t>(symbols_.size()));
    if (fresh)
        symbols_.push_back(Symbol { f.function, f.module, base });
    return it->second;
}

} // namespace lockscope::detail
