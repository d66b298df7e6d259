// SPDX-License-Identifier: GPL-2.0-or-later
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

// Kernel symbolization from /proc/kallsyms. kallsyms has no sizes, so an
// address belongs to the closest symbol at or below it; text and data
// symbols are kept apart so that a lock address never resolves to a function
// and an instruction pointer never to a variable.
namespace lockscope::record {

class SymbolError : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

struct KernelSymbol {
    uint64_t address = 0;
    std::string name;
    std::string module;  // "" for vmlinux
    char type = '?';     // the kallsyms type letter
};

struct ResolvedSymbol {
    std::string name;
    uint64_t offset = 0;
    std::string module;
};

class KernelSymbols {
public:
    // Data symbols are trusted only when kallsyms exports them broadly
    // (CONFIG_KALLSYMS_ALL); a handful of exported ones would otherwise swallow
    // every unnamed variable that follows them.
    static constexpr size_t kMinDataSymbols = 1000;
    // No kernel function is this long; beyond it the address is in a gap.
    static constexpr uint64_t kMaxTextOffset = 1ull << 20;
    static constexpr uint64_t kMaxDataOffset = 1ull << 16;

    // Parses kallsyms text. Throws SymbolError naming `origin` and the line
    // for malformed input, and when every address is zero (kptr_restrict).
    static KernelSymbols parse(std::string_view text, std::string_view origin = "kallsyms");
    static KernelSymbols load(const std::string& path = "/proc/kallsyms");

    std::optional<ResolvedSymbol> resolveText(uint64_t address) const;
    // The global variable holding `address`, when data symbols are available.
    std::optional<ResolvedSymbol> resolveData(uint64_t address) const;
    // Exact-name look-up of a text symbol (first match; vmlinux before modules).
    std::optional<uint64_t> addressOf(std::string_view name) const;
    // Exact-name look-up of a vmlinux data symbol, when data symbols are available.
    std::optional<uint64_t> dataAddressOf(std::string_view name) const;
    // [address, next text symbol's address) of each text symbol whose name
    // `wanted` accepts, in address order (at most kMaxTextOffset long).
    std::vector<std::pair<uint64_t, uint64_t>> textRanges(const std::function<bool(std::string_view)>& wanted) const;

    bool hasDataSymbols() const noexcept { return data_.size() >= kMinDataSymbols; }
    size_t textCount() const noexcept { return text_.size(); }
    size_t dataCount() const noexcept { return data_.size(); }

private:
    std::vector<KernelSymbol> text_;  // sorted by address
    std::vector<KernelSymbol> data_;  // sorted by address
};

} // namespace lockscope::record
