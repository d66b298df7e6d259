// SPDX-License-Identifier: GPL-2.0-or-later
#include "json_access.h"

#include <cinttypes>
#include <climits>
#include <cmath>
#include <cstdio>

#include "lockscope/util/error_text.h"

namespace lockscope::detail {

using util::printable;

[[noreturn]] void fail(const Path& at, const std::string& problem)
{
    throw CaptureError(at.str() + ": " + problem);
}

std::string describe(const json& v)
{
    switch (v.type()) {
    case json::value_t::null:
        return "null";
    case json::value_t::boolean:
        return v.get<bool>() ? "true" : "false";
    case json::value_t::string:
        return "a string \"" + printable(v.get_ref<const std::string&>(), 40) + "\"";
    case json::value_t::array:
        return "an array";
    case json::value_t::object:
        return "an object";
    case json::value_t::number_integer:
        return std::to_string(v.get<int64_t>());
    case json::value_t::number_unsigned:
        return std::to_string(v.get<uint64_t>());
    case json::value_t::number_float: {
        char buf[40];
        (void)std::snprintf(buf, sizeof buf, "%.17g", v.get<double>());
        return buf;
    }
    case json::value_t::binary:
        return "binary data";
    case json::value_t::discarded:
        return "a discarded value";
    }
    return "an unknown value";
}

const json& member(const json& obj, const Path& at, const char* name)
{
    auto it = obj.find(name);
    if (it == obj.end())
        fail(at / name, "missing (required field)");
    return *it;
}

const json* optionalMember(const json& obj, const char* name)
{
    auto it = obj.find(name);
    if (it == obj.end() || it->is_null())
        return nullptr;
    return &*it;
}

const json& expectObject(const json& v, const Path& at)
{
    if (!v.is_object())
        fail(at, "expected an object, got " + describe(v));
    return v;
}

const json& expectArray(const json& v, const Path& at)
{
    if (!v.is_array())
        fail(at, "expected an array, got " + describe(v));
    return v;
}

const json& objectAt(const json& obj, const Path& at, const char* name)
{
    return expectObject(member(obj, at, name), at / name);
}

const json& arrayAt(const json& obj, const Path& at, const char* name)
{
    return expectArray(member(obj, at, name), at / name);
}

std::string toStr(const json& v, const Path& at)
{
    if (!v.is_string())
        fail(at, "expected a string, got " + describe(v));
    return v.get<std::string>();
}

std::string strAt(const json& obj, const Path& at, const char* name)
{
    return toStr(member(obj, at, name), at / name);
}

std::string nonEmptyStrAt(const json& obj, const Path& at, const char* name)
{
    std::string s = strAt(obj, at, name);
    if (s.empty())
        fail(at / name, "must not be empty");
    return s;
}

bool boolAt(const json& obj, const Path& at, const char* name)
{
    const json& v = member(obj, at, name);
    if (!v.is_boolean())
        fail(at / name, "expected true or false, got " + describe(v));
    return v.get<bool>();
}

uint64_t toU64(const json& v, const Path& at, uint64_t maxValue)
{
    // The parser stores non-negative integers as unsigned, but documents built
    // in code hold them as signed: accept both.
    if (v.is_number_integer()) {
        if (!v.is_number_unsigned() && v.get<int64_t>() < 0)
            fail(at, "expected a non-negative integer, got " + describe(v));
        const uint64_t u
            = v.is_number_unsigned() ? v.get<uint64_t>() : static_cast<uint64_t>(v.get<int64_t>());
        if (u > maxValue)
            fail(at, "out of range: " + std::to_string(u) + " > " + std::to_string(maxValue));
        return u;
    }
    if (v.is_number_float()) {
        const double d = v.get<double>();
        if (std::isfinite(d) && d == std::floor(d))
            fail(at, "integer out of range (max " + std::to_string(maxValue) + "), got " + describe(v));
        fail(at, "expected an integer, got " + describe(v));
    }
    fail(at, "expected a non-negative integer, got " + describe(v));
}

uint64_t u64At(const json& obj, const Path& at, const char* name)
{
    return toU64(member(obj, at, name), at / name);
}

uint32_t u32At(const json& obj, const Path& at, const char* name)
{
    return static_cast<uint32_t>(toU64(member(obj, at, name), at / name, UINT32_MAX));
}

int toInt(const json& v, const Path& at)
{
    if (v.is_number_integer()) { // signed or unsigned
        if (v.is_number_unsigned()) {
            const uint64_t u = v.get<uint64_t>();
            if (u > static_cast<uint64_t>(INT_MAX))
                fail(at, "integer out of range, got " + describe(v));
            return static_cast<int>(u);
        }
        const int64_t s = v.get<int64_t>();
        if (s < INT_MIN || s > INT_MAX)
            fail(at, "integer out of range, got " + describe(v));
        return static_cast<int>(s);
    }
    fail(at, "expected an integer, got " + describe(v));
}

double nonNegativeDoubleAt(const json& obj, const Path& at, const char* name)
{
    const json& v = member(obj, at, name);
    if (!v.is_number())
        fail(at / name, "expected a number, got " + describe(v));
    const double d = v.get<double>();
    if (!std::isfinite(d) || d < 0.0)
        fail(at / name, "expected a finite non-negative number, got " + describe(v));
    return d;
}

std::string hexAddress(uint64_t a)
{
    char buf[24];
    (void)std::snprintf(buf, sizeof buf, "0x%" PRIx64, a);
    return buf;
}

uint64_t toAddress(const json& v, const Path& at)
{
    if (!v.is_string())
        fail(at, "expected a hex address string such as \"0xffffffff81000000\", got " + describe(v));
    const auto& s = v.get_ref<const std::string&>();
    if (s.size() < 3 || s.size() > 18 || s[0] != '0' || (s[1] != 'x' && s[1] != 'X'))
        fail(at, "expected a hex address \"0x\" + 1..16 hex digits, got " + describe(v));
    uint64_t a = 0;
    for (size_t i = 2; i < s.size(); ++i) {
        const char c = s[i];
        unsigned d = 0;
        if (c >= '0' && c <= '9')
            d = static_cast<unsigned>(c - '0');
        else if (c >= 'a' && c <= 'f')
            d = static_cast<unsigned>(c - 'a' + 10);
        else if (c >= 'A' && c <= 'F')
            d = static_cast<unsigned>(c - 'A' + 10);
        else
            fail(at, "expected a hex address \"0x\" + 1..16 hex digits, got " + describe(v));
        a = (a << 4) | d;
    }
    return a;
}

std::optional<uint64_t> optionalAddressAt(const json& obj, const Path& at, const char* name)
{
    const json* v = optionalMember(obj, name);
    if (!v)
        return std::nullopt;
    return toAddress(*v, at / name);
}

std::vector<std::string> stringListAt(const json& obj, const Path& at, const char* name)
{
    const json& arr = arrayAt(obj, at, name);
    const Path here = at / name;
    std::vector<std::string> out;
    out.reserve(arr.size());
    for (size_t i = 0; i < arr.size(); ++i)
        out.push_back(toStr(arr[i], here[i]));
    return out;
}

} // namespace lockscope::detail
