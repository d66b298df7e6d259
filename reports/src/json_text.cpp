// SPDX-License-Identifier: GPL-2.0-or-later
#include "json_text.h"

#include <algorithm>
#include <stdexcept>
#include <charconv>
#include <cmath>
#include <cstring>

#include <nlohmann/json.hpp>

namespace lockscope::reports::detail {

namespace {
// Misuse is a bug in a renderer, but a release build must not write JSON
// that silently differs from what the tests checked: always on, a few ns.
void require(bool ok, const char* what)
{
    if (!ok)
        throw std::logic_error(std::string("JsonText: ") + what);
}

// Bytes a JSON string holds as they are: printable ASCII but '"' and '\\'.
constexpr std::array<bool, 256> kPlain = [] {
    std::array<bool, 256> plain{};
    for (int ch = 0x20; ch < 0x7f; ++ch)
        plain[size_t(ch)] = ch != '"' && ch != '\\';
    return plain;
}();

bool plainText(std::string_view s) noexcept
{
    return std::all_of(s.begin(), s.end(), [](char ch) { return kPlain[static_cast<unsigned char>(ch)]; });
}

// "s" and then `tail`, in one append: a big comparison writes millions of
// keys and names, a quarter of its writing's time with an append for each
// quote and the colon.
void putString(std::string& out, std::string_view s, std::string_view tail)
{
    if (!plainText(s)) { // escapes and UTF-8 checks: nlohmann's, for the few names that need them
        out += nlohmann::json(s).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
        out += tail;
        return;
    }
    const size_t at = out.size();
    out.append(s.size() + 2 + tail.size(), '"');
    char* p = out.data() + at + 1;
    if (!s.empty())
        std::memcpy(p, s.data(), s.size());
    if (!tail.empty())
        std::memcpy(p + s.size() + 1, tail.data(), tail.size());
}
} // namespace

JsonText::JsonText(std::string& out, unsigned depth) : out_(out), base_(depth)
{
    levels_.reserve(8);
    members_.reserve(16);
}

void JsonText::newline(unsigned depth)
{
    out_ += '\n';
    out_.append(size_t{2} * depth, ' ');
}

void JsonText::separate(Level& in)
{
    if (in.one_line) {
        if (!in.empty)
            out_ += ", ";
        members_.push_back(out_.size());
    } else {
        if (!in.empty)
            out_ += ',';
        newline(base_ + unsigned(levels_.size()));
    }
    in.empty = false;
}

void JsonText::breakLines()
{
    if (levels_.empty() || !levels_.back().one_line)
        return;
    Level& in = levels_.back();
    in.one_line = false;
    const size_t base = in.opened_at + 1; // after its bracket
    const std::string line = out_.substr(base);
    out_.resize(base);
    for (size_t i = 0; i < members_.size(); ++i) {
        if (i)
            out_ += ',';
        newline(base_ + unsigned(levels_.size()));
        const size_t from = members_[i] - base;
        const size_t to = i + 1 < members_.size() ? members_[i + 1] - base - 2 : line.size(); // less ", "
        out_.append(line, from, to - from);
    }
    members_.clear();
}

void JsonText::beforeValue()
{
    if (after_key_) {
        after_key_ = false;
        return;
    }
    if (levels_.empty())
        return;
    Level& in = levels_.back();
    require(!in.object, "an object's value needs its key first");
    separate(in);
}

JsonText& JsonText::key(std::string_view k)
{
    require(!levels_.empty() && levels_.back().object && !after_key_, "a key outside an object");
    Level& in = levels_.back();
    require(in.empty || in.last_key < k, "members out of nlohmann's (sorted) order");
    separate(in);
    in.last_key = k;
    putString(out_, k, ": ");
    after_key_ = true;
    return *this;
}

void JsonText::open(char bracket, bool object)
{
    breakLines();
    beforeValue();
    levels_.push_back(Level{.object = object, .empty = true, .one_line = true, .opened_at = out_.size(), .last_key = {}});
    out_ += bracket;
}

JsonText& JsonText::object()
{
    open('{', true);
    return *this;
}

JsonText& JsonText::array()
{
    open('[', false);
    return *this;
}

JsonText& JsonText::end()
{
    require(!levels_.empty() && !after_key_, "end() with nothing open or a key without its value");
    const Level closed = levels_.back();
    levels_.pop_back();
    if (closed.one_line) // on its line, {} or [] when empty
        members_.clear();
    else
        newline(base_ + unsigned(levels_.size()));
    out_ += closed.object ? '}' : ']';
    return *this;
}

JsonText& JsonText::value(std::string_view s)
{
    beforeValue();
    putJsonString(out_, s);
    return *this;
}

JsonText& JsonText::value(bool b)
{
    beforeValue();
    out_ += b ? "true" : "false";
    return *this;
}

JsonText& JsonText::value(std::nullptr_t)
{
    beforeValue();
    out_ += "null";
    return *this;
}

JsonText& JsonText::value(double d)
{
    beforeValue();
    if (!std::isfinite(d)) {
        out_ += "null";
        return *this;
    }
    // A whole number below 1e15 nlohmann writes as its digits and ".0";
    // most of a comparison's doubles are counts, and its dtoa is dear.
    if (d == std::trunc(d) && std::fabs(d) < 1e15 && !(d == 0.0 && std::signbit(d))) {
        std::array<char, 24> buf{};
        char* last = std::to_chars(buf.data(), buf.data() + buf.size(), int64_t(d)).ptr;
        *last++ = '.';
        *last++ = '0';
        out_.append(buf.data(), size_t(last - buf.data()));
        return *this;
    }
    // nlohmann's own shortest round-trip form, so the text stays what its
    // dump() wrote: "1.0" for a whole number, exponents as "1e-05".
    std::array<char, 64> buf{};
    const char* last = nlohmann::detail::to_chars(buf.data(), buf.data() + buf.size(), d);
    out_.append(buf.data(), size_t(last - buf.data()));
    return *this;
}

JsonText& JsonText::integer(int64_t n)
{
    beforeValue();
    std::array<char, 24> buf{};
    out_.append(buf.data(), std::to_chars(buf.data(), buf.data() + buf.size(), n).ptr);
    return *this;
}

JsonText& JsonText::unsignedInteger(uint64_t n)
{
    beforeValue();
    std::array<char, 24> buf{};
    out_.append(buf.data(), std::to_chars(buf.data(), buf.data() + buf.size(), n).ptr);
    return *this;
}

JsonText& JsonText::value(const nlohmann::json& v)
{
    tree(v);
    return *this;
}

// A free-form part laid out as the rest: its objects iterate sorted (std::map).
void JsonText::tree(const nlohmann::json& v)
{
    switch (v.type()) {
    case nlohmann::json::value_t::object:
        object();
        for (auto it = v.begin(); it != v.end(); ++it) {
            key(it.key());
            tree(it.value());
        }
        end();
        return;
    case nlohmann::json::value_t::array:
        array();
        for (const auto& e : v)
            tree(e);
        end();
        return;
    case nlohmann::json::value_t::string: value(v.get_ref<const std::string&>()); return;
    case nlohmann::json::value_t::boolean: value(v.get<bool>()); return;
    case nlohmann::json::value_t::number_integer: value(v.get<int64_t>()); return;
    case nlohmann::json::value_t::number_unsigned: value(v.get<uint64_t>()); return;
    case nlohmann::json::value_t::number_float: value(v.get<double>()); return;
    default: value(nullptr); return; // null; a parsed document holds no binary
    }
}

void JsonText::external()
{
    breakLines();
    beforeValue();
}

void putJsonString(std::string& out, std::string_view s)
{
    putString(out, s, {});
}

} // namespace lockscope::reports::detail
