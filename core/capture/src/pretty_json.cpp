// SPDX-License-Identifier: GPL-2.0-or-later
#include "pretty_json.h"

#include <algorithm>

namespace lockscope::detail {
namespace {

bool isScalar(const nlohmann::ordered_json& v)
{
    return !v.is_structured();
}

bool inlineable(const nlohmann::ordered_json& v)
{
    if (v.empty())
        return true;
    if (v.is_array())
        return std::all_of(v.begin(), v.end(), isScalar);
    // Small flat objects (frames, probe statuses, leaves) read best as one line.
    return v.size() <= 6 && std::all_of(v.begin(), v.end(), isScalar);
}

} // namespace

std::string scalarText(const nlohmann::ordered_json& v)
{
    return v.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

void prettyPrint(const nlohmann::ordered_json& v, std::string& out, unsigned indent)
{
    if (!v.is_structured()) {
        out += scalarText(v);
        return;
    }
    const bool obj = v.is_object();
    if (inlineable(v)) {
        out += obj ? '{' : '[';
        bool first = true;
        for (auto it = v.begin(); it != v.end(); ++it) {
            if (!first)
                out += ", ";
            first = false;
            if (obj) {
                out += scalarText(nlohmann::ordered_json(it.key()));
                out += ": ";
            }
            out += scalarText(it.value());
        }
        out += obj ? '}' : ']';
        return;
    }
    const std::string pad(indent + 2, ' ');
    out += obj ? "{\n" : "[\n";
    bool first = true;
    for (auto it = v.begin(); it != v.end(); ++it) {
        if (!first)
            out += ",\n";
        first = false;
        out += pad;
        if (obj) {
            out += scalarText(nlohmann::ordered_json(it.key()));
            out += ": ";
        }
        prettyPrint(it.value(), out, indent + 2);
    }
    out += '\n';
    out.append(indent, ' ');
    out += obj ? '}' : ']';
}

} // namespace lockscope::detail
