// SPDX-License-Identifier: GPL-2.0-or-later
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "lockscope/capture/io.h"

// Reading one field of a capture document: every accessor checks the JSON
// type and range and throws CaptureError naming the JSON path of the bad
// field, e.g. "locks[3].wait.hist: expected 64 integers, got 12" (internal
// to lockscope_capture: the readers, histogram_json and the SAX reader).
namespace lockscope::detail {

using nlohmann::json;

// A JSON path built on the stack while validating and formatted only when an
// error is reported, so that valid files with 100k stacks cost no strings.
struct Path {
    const Path* parent = nullptr;
    const char* key = nullptr; // member name, or nullptr for an array index
    size_t index = 0;

    Path operator/(const char* k) const { return Path { this, k, 0 }; }
    Path operator[](size_t i) const { return Path { this, nullptr, i }; }

    std::string str() const
    {
        std::string out;
        append(out);
        return out.empty() ? std::string("document") : out;
    }

private:
    void append(std::string& out) const
    {
        if (parent)
            parent->append(out);
        if (key) {
            if (!*key)
                return; // the root
            if (!out.empty())
                out += '.';
            out += key;
        } else {
            out += '[';
            out += std::to_string(index);
            out += ']';
        }
    }
};

inline const Path kRoot { nullptr, "", 0 };

[[noreturn]] void fail(const Path& at, const std::string& problem);
// A value as an error message shows it: its type, or a short scalar.
std::string describe(const json& v);

const json& member(const json& obj, const Path& at, const char* name);
// nullptr when the optional member is absent or null.
const json* optionalMember(const json& obj, const char* name);
const json& expectObject(const json& v, const Path& at);
const json& expectArray(const json& v, const Path& at);
const json& objectAt(const json& obj, const Path& at, const char* name);
const json& arrayAt(const json& obj, const Path& at, const char* name);
std::string toStr(const json& v, const Path& at);
std::string strAt(const json& obj, const Path& at, const char* name);
std::string nonEmptyStrAt(const json& obj, const Path& at, const char* name);
bool boolAt(const json& obj, const Path& at, const char* name);
uint64_t toU64(const json& v, const Path& at, uint64_t maxValue = UINT64_MAX);
uint64_t u64At(const json& obj, const Path& at, const char* name);
uint32_t u32At(const json& obj, const Path& at, const char* name);
int toInt(const json& v, const Path& at);
double nonNegativeDoubleAt(const json& obj, const Path& at, const char* name);
std::vector<std::string> stringListAt(const json& obj, const Path& at, const char* name);

// Addresses are strings because JavaScript (the GUI's web views, jq) loses
// precision on integers above 2^53, and kernel addresses are all above it:
// "0x" + lower-case hex digits written, either case read.
std::string hexAddress(uint64_t a);
uint64_t toAddress(const json& v, const Path& at);
std::optional<uint64_t> optionalAddressAt(const json& obj, const Path& at, const char* name);

} // namespace lockscope::detail
