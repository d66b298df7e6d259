// SPDX-License-Identifier: GPL-2.0-or-later
#pragma once

#include <string>

#include <nlohmann/json.hpp>

// The capture writer's text layout (internal to lockscope_capture).
namespace lockscope::detail {

// One value on one line, invalid UTF-8 replaced rather than refused.
std::string scalarText(const nlohmann::ordered_json& v);

// Like dump(2) but keeps arrays of numbers (the 64 histogram buckets) and
// flat objects on one line, so that a capture stays reviewable in a diff.
void prettyPrint(const nlohmann::ordered_json& v, std::string& out, unsigned indent);

} // namespace lockscope::detail
