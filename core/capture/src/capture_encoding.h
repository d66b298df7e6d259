// SPDX-License-Identifier: GPL-2.0-or-later
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "json_access.h"
#include "lockscope/capture/capture.h"

// What differs between the capture layouts (docs/capture-format.md): version
// 1 spells every frame out and lists all 64 buckets of every histogram;
// version 2 (compact) names each symbol once in "symbols", writes a stack's
// frames as [symbol, offset] pairs and a histogram's non-empty buckets only.
// Everything else (every section and field) is read and written by the same
// code for both, which takes an Encoding where frames or histograms occur.
namespace lockscope::detail {

// A function of one module at one load address: a frame is a symbol plus
// its offset, and its address (when known) is base + offset.
struct Symbol {
    InternedString function;
    InternedString module;
    std::optional<uint64_t> base;
};

struct Encoding {
    bool compact = false;
    std::vector<Symbol> symbols; // compact: the document's symbol table
};

// Reads the compact layout's "symbols" table.
std::vector<Symbol> symbolsFromJson(const json& arr, const Path& at);

// Frames -> symbol ids while writing the compact layout: first seen, first numbered.
class SymbolTable {
public:
    uint32_t idOf(const Frame& f);
    const std::vector<Symbol>& symbols() const noexcept { return symbols_; }

private:
    std::unordered_map<std::string, uint32_t> ids_;
    std::vector<Symbol> symbols_;
};

// The base a frame's symbol has: its address minus its offset (wrapping, so
// that any address round-trips exactly).
inline std::optional<uint64_t> symbolBase(const Frame& f)
{
    return f.address ? std::optional<uint64_t>(*f.address - f.offset) : std::nullopt;
}

} // namespace lockscope::detail
