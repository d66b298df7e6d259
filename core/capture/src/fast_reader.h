// SPDX-License-Identifier: GPL-2.0-or-later
#pragma once

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include <simdjson.h>

#include "capture_encoding.h"
#include "lockscope/capture/capture.h"
#include "lockscope/capture/io.h"

// The capture reader: simdjson On-Demand straight into the model, no DOM
// (internal to lockscope_capture). It accepts only what the reference reader
// (sax_reader.cpp) accepts, and builds the same Capture; any input it cannot
// take as it stands (malformed, members out of the writer's order, unknown
// or repeated members, nulls, escaped keys) it declines, and parseCapture()
// hands that input to the reference reader, which words the error or reads
// the unusual file. So the two can never disagree on a message.
namespace lockscope::detail::fast {

namespace od = simdjson::ondemand;

// Bytes simdjson may read past the end of the text.
inline constexpr size_t kPadding = simdjson::SIMDJSON_PADDING;

// Thrown to give up on the input (as is any simdjson_error).
struct Decline { };

[[noreturn]] inline void decline() { throw Decline {}; }

inline void need(bool ok)
{
    if (!ok)
        decline();
}

// The raw key, declining escaped keys (the reference unescapes them).
inline std::string_view keyOf(od::field& f)
{
    const char* const start = f.key().raw();
    const char* p = start;
    while (*p != '"') {
        need(*p != '\\');
        ++p;
    }
    return { start, static_cast<size_t>(p - start) };
}

// Calls onMember(index into keys, value) for each member of obj and returns
// the bit set of the keys seen; an unknown or repeated key declines.
template <size_t N, class F>
uint64_t members(od::object obj, const std::array<std::string_view, N>& keys, F&& onMember)
{
    static_assert(N <= 64);
    uint64_t seen = 0;
    for (auto m : obj) {
        od::field f = std::move(m);
        const std::string_view k = keyOf(f);
        size_t i = 0;
        while (i < N && keys[i] != k)
            ++i;
        need(i < N && !(seen >> i & 1U));
        seen |= uint64_t { 1 } << i;
        onMember(i, f.value());
    }
    return seen;
}

// The bits of keys[first..] required: every key up to optionalFrom.
constexpr uint64_t bitsBelow(size_t n) { return n >= 64 ? ~uint64_t { 0 } : (uint64_t { 1 } << n) - 1; }

inline uint64_t u64(od::value& v) { return v.get_uint64(); }

inline uint32_t u32(od::value& v)
{
    const uint64_t x = v.get_uint64();
    need(x <= UINT32_MAX);
    return static_cast<uint32_t>(x);
}

inline std::string str(od::value& v)
{
    const std::string_view s = v.get_string();
    return std::string(s);
}

inline std::string nonEmptyStr(od::value& v)
{
    std::string s = str(v);
    need(!s.empty());
    return s;
}

uint64_t address(od::value& v);
double nonNegativeDouble(od::value& v);
std::vector<std::string> stringList(od::value& v);

// Stack id -> kind, for the references sites, holders and CPU samples make:
// a table indexed by id while ids are small (the writer numbers stacks from
// 1), a hash map beyond, so that 100k stacks cost no rehashing.
class StackKinds {
public:
    bool add(uint32_t id, StackKind kind) // false when id is there already
    {
        if (id >= kDense)
            return sparse_.emplace(id, kind).second;
        if (id >= dense_.size())
            dense_.resize(std::max<size_t>(id + 1, dense_.size() * 2));
        if (dense_[id])
            return false;
        dense_[id] = static_cast<uint8_t>(static_cast<uint8_t>(kind) + 1);
        return true;
    }
    std::optional<StackKind> find(uint32_t id) const
    {
        if (id >= kDense) {
            const auto it = sparse_.find(id);
            return it == sparse_.end() ? std::nullopt : std::optional<StackKind>(it->second);
        }
        if (id >= dense_.size() || !dense_[id])
            return std::nullopt;
        return static_cast<StackKind>(dense_[id] - 1);
    }

private:
    static constexpr uint32_t kDense = 1U << 24;
    std::vector<uint8_t> dense_; // kind + 1, 0 = no such stack
    std::unordered_map<uint32_t, StackKind> sparse_;
};

// What the sections share while the document is read.
struct State {
    bool compact = false;
    std::vector<Symbol> symbols;
    StackKinds kinds;           // every stack read so far
    std::unordered_set<std::string> lockKeys;
    std::vector<Frame> scratch; // one stack's frames, before they are sized

    void checkRef(uint32_t id, std::optional<StackKind> want = std::nullopt) const
    {
        const auto kind = kinds.find(id);
        need(kind && (!want || *kind == *want));
    }
};

Log2Hist hist(od::value& v, const State& st);
// One element of the symbols, stacks or locks array (with the checks across elements).
Symbol symbol(od::value& v);
void addStack(od::value& v, State& st, std::vector<Stack>& out);
void addLock(od::value& v, State& st, std::vector<Lock>& out);

// Told, as the big arrays are read, that the text before a point will not
// be read again (its pages may be given back).
using Consumed = std::function<void(const char* upTo)>;

// Asked for more text when the reader gets to the end of what is there:
// returns the end of the text there now (the same end: there is no more).
using More = std::function<char*()>;

// A capture's text, whole or as much as has been read of it so far.
struct Input {
    char* text;
    size_t size; // bytes there now
    // Bytes that may be read from text (zeros or stale past the text), at least size + kPadding.
    size_t readable;
    Consumed consumed = {};
    More more = {}; // none: the text is all there
};

// The capture in the text; nullopt when declined. The text is written to
// while it is read (json_pieces.h) and is as it was when this returns, but
// for what consumed was told of.
std::optional<Capture> parse(const Input& in, const ReadLimits& limits);

// The capture in text[0, size), with kPadding readable bytes after it.
inline std::optional<Capture> parse(char* text, size_t size, const ReadLimits& limits)
{
    return parse(Input { .text = text, .size = size, .readable = size + kPadding }, limits);
}

} // namespace lockscope::detail::fast
