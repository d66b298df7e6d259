// SPDX-License-Identifier: GPL-2.0-or-later
#include "lockscope/record/kallsyms.h"
#include "lockscope/util/proc_kallsyms.h"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

namespace lockscope::record {
namespace {

bool parseHex(std::string_view s, uint64_t& out)
{
    if (s.empty() || s.size() > 16)
        return false;
    uint64_t v = 0;
    for (char c : s) {
        unsigned d;
        if (c >= '0' && c <= '9')
            d = unsigned(c - '0');
        else if (c >= 'a' && c <= 'f')
            d = unsigned(c - 'a' + 10);
        else if (c >= 'A' && c <= 'F')
            d = unsigned(c - 'A' + 10);
        else
            return false;
        v = (v << 4) | d;
    }
    out = v;
    return true;
}

std::string_view nextField(std::string_view& line)
{
    size_t b = line.find_first_not_of(" \t");
    if (b == std::string_view::npos) {
        line = {};
        return {};
    }
    line.remove_prefix(b);
    size_t e = line.find_first_of(" \t");
    std::string_view f = line.substr(0, e);
    line.remove_prefix(e == std::string_view::npos ? line.size() : e);
    return f;
}

bool isTextType(char t)
{
    // W/w are weak symbols, in kallsyms practically always functions.
    return t == 'T' || t == 't' || t == 'W' || t == 'w';
}

bool isDataType(char t)
{
    return t == 'D' || t == 'd' || t == 'B' || t == 'b' || t == 'R' || t == 'r' || t == 'G' ||
           t == 'g' || t == 'S' || t == 's' || t == 'V' || t == 'v';
}

std::optional<ResolvedSymbol> lookup(const std::vector<KernelSymbol>& syms, uint64_t address,
                                     uint64_t maxOffset)
{
    auto it = std::upper_bound(syms.begin(), syms.end(), address,
                               [](uint64_t a, const KernelSymbol& s) { return a < s.address; });
    if (it == syms.begin())
        return std::nullopt;
    --it;
    while (it != syms.begin() && std::prev(it)->address == it->address)
        --it;
    const KernelSymbol& s = *it;
    uint64_t off = address - s.address;
    if (off >= maxOffset)
        return std::nullopt;
    return ResolvedSymbol{s.name, off, s.module};
}

} // namespace

KernelSymbols KernelSymbols::parse(std::string_view text, std::string_view origin)
{
    KernelSymbols ks;
    // A kallsyms has 10^5 lines: growing the vectors moved them ~17 times.
    const auto lines = static_cast<size_t>(std::count(text.begin(), text.end(), '\n')) + 1;
    ks.text_.reserve(lines);
    ks.data_.reserve(lines);
    size_t lineNo = 0, total = 0, nonZero = 0;
    while (!text.empty()) {
        size_t nl = text.find('\n');
        std::string_view line = text.substr(0, nl);
        text.remove_prefix(nl == std::string_view::npos ? text.size() : nl + 1);
        ++lineNo;
        if (line.find_first_not_of(" \t\r") == std::string_view::npos)
            continue;
        std::string_view rest = line;
        std::string_view addr = nextField(rest), type = nextField(rest), name = nextField(rest),
                         mod = nextField(rest);
        uint64_t a = 0;
        if (!parseHex(addr, a) || type.size() != 1 || name.empty())
            throw SymbolError(std::string(origin) + ":" + std::to_string(lineNo) +
                              ": not a kallsyms line (expected 'ADDRESS TYPE NAME [MODULE]')");
        ++total;
        if (a != 0)
            ++nonZero;
        KernelSymbol s{a, std::string(name), {}, type[0]};
        if (mod.size() >= 2 && mod.front() == '[' && mod.back() == ']')
            s.module = std::string(mod.substr(1, mod.size() - 2));
        if (isTextType(s.type))
            ks.text_.push_back(std::move(s));
        else if (isDataType(s.type))
            ks.data_.push_back(std::move(s));
    }
    if (total == 0)
        throw SymbolError(std::string(origin) + ": no symbols");
    if (nonZero == 0)
        throw SymbolError(std::string(origin) +
                          ": every kernel address reads as zero (kernel.kptr_restrict); run as root "
                          "with kernel.kptr_restrict <= 1 (sysctl -w kernel.kptr_restrict=1)");
    // Aliases share an address; sorting global names ('T') before local ones
    // makes the look-up below report the global alias.
    auto byAddr = [](const KernelSymbol& x, const KernelSymbol& y) {
        if (x.address != y.address)
            return x.address < y.address;
        return std::isupper(static_cast<unsigned char>(x.type)) >
               std::isupper(static_cast<unsigned char>(y.type));
    };
    std::stable_sort(ks.text_.begin(), ks.text_.end(), byAddr);
    std::stable_sort(ks.data_.begin(), ks.data_.end(), byAddr);
    return ks;
}

KernelSymbols KernelSymbols::load(const std::string& path)
{
    if (path == "/proc/kallsyms" && !util::procKallsyms().empty())
        return parse(util::procKallsyms(), path);
    std::ifstream in(path);
    if (!in)
        throw SymbolError(path + ": cannot open (" + std::strerror(errno) + ")");
    std::ostringstream ss;
    ss << in.rdbuf();
    return parse(ss.str(), path);
}

std::optional<ResolvedSymbol> KernelSymbols::resolveText(uint64_t address) const
{
    return lookup(text_, address, kMaxTextOffset);
}

std::optional<ResolvedSymbol> KernelSymbols::resolveData(uint64_t address) const
{
    if (!hasDataSymbols())
        return std::nullopt;
    // A text symbol between the variable and the address ends the variable.
    auto r = lookup(data_, address, kMaxDataOffset);
    if (!r)
        return r;
    auto t = lookup(text_, address, kMaxTextOffset);
    if (t && t->offset < r->offset)
        return std::nullopt;
    return r;
}

std::optional<uint64_t> KernelSymbols::addressOf(std::string_view name) const
{
    std::optional<uint64_t> best;
    for (const auto& s : text_) {
        if (s.name != name)
            continue;
        if (s.module.empty())
            return s.address;
        if (!best)
            best = s.address;
    }
    return best;
}

std::optional<uint64_t> KernelSymbols::dataAddressOf(std::string_view name) const
{
    if (!hasDataSymbols())
        return std::nullopt;
    for (const auto& s : data_)
        if (s.name == name && s.module.empty())
            return s.address;
    return std::nullopt;
}

std::vector<std::pair<uint64_t, uint64_t>>
KernelSymbols::textRanges(const std::function<bool(std::string_view)>& wanted) const
{
    std::vector<std::pair<uint64_t, uint64_t>> out;
    for (size_t i = 0; i < text_.size(); ++i) {
        if (!wanted(text_[i].name))
            continue;
        const uint64_t begin = text_[i].address;
        uint64_t end = begin + kMaxTextOffset;
        for (size_t j = i + 1; j < text_.size(); ++j)
            if (text_[j].address > begin) {
                end = std::min(end, text_[j].address);
                break;
            }
        out.emplace_back(begin, end);
    }
    return out;
}

} // namespace lockscope::record
