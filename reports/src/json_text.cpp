// SPDX-License-Identifier: GPL-2.0-or-later
#include "json_text.h"

#include <algorithm>
#include <stdexcept>
#include <charconv>
#include <cmath>

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
} // namespace

JsonText::JsonText(std::string& out, unsigned depth) : out_(out), base_(depth)
{
    levels_.reserve(8);
}

void JsonText::newline(unsigned depth)
{
    out_ += '\n';
    out_.append(size_t{2} * depth, ' ');
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
    if (!in.empty)
        out_ += ',';
    in.empty = false;
    newline(base_ + unsigned(levels_.size()));
}

JsonText& JsonText::key(std::string_view k)
{
    require(!levels_.empty() && levels_.back().object && !after_key_, "a key outside an object");
    Level& in = levels_.back();
    require(in.empty || in.last_key < k, "members out of nlohmann's (sorted) order");
    if (!in.empty)
        out_ += ',';
    in.empty = false;
    in.last_key = k;
    newline(base_ + unsigned(levels_.size()));
    putJsonString(out_, k);
    out_ += ": ";
    after_key_ = true;
    return *this;
}

void JsonText::open(char bracket, bool object)
{
    beforeValue();
    out_ += bracket;
    levels_.push_back(Level{.object = object, .empty = true, .last_key = {}});
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
    if (!closed.empty) // nlohmann writes an empty one as {} or []
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
    beforeValue();
    const std::string text = v.dump(2, ' ', false, nlohmann::json::error_handler_t::replace); // may not be UTF-8
    const unsigned depth = base_ + unsigned(levels_.size());
    size_t from = 0;
    for (size_t nl = text.find('\n'); nl != std::string::npos; from = nl + 1, nl = text.find('\n', from)) {
        out_.append(text, from, nl - from);
        newline(depth);
    }
    out_.append(text, from);
    return *this;
}

void JsonText::external()
{
    beforeValue();
}

void putJsonString(std::string& out, std::string_view s)
{
    const bool plain = std::all_of(s.begin(), s.end(), [](char ch) {
        const auto u = static_cast<unsigned char>(ch);
        return u >= 0x20 && u < 0x7f && ch != '"' && ch != '\\';
    });
    if (!plain) { // escapes and UTF-8 checks: nlohmann's, for the few names that need them
        out += nlohmann::json(s).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
        return;
    }
    out += '"';
    out += s;
    out += '"';
}

} // namespace lockscope::reports::detail
