// SPDX-License-Identifier: GPL-2.0-or-later
#pragma once

#include <nlohmann/json.hpp>

#include "json_access.h"
#include "lockscope/capture/histogram.h"

// A Log2Hist as the capture format holds it (docs/capture-format.md):
// count, total_ns, min_ns, max_ns and the 64 bucket counts.
namespace lockscope::detail {

// J is ordered_json for the writer (fields in format order) or json for toJson().
template <class J> J histToJson(const Log2Hist& h)
{
    J buckets = J::array();
    for (uint64_t b : h.buckets())
        buckets.push_back(b);
    return J { { "count", h.count() }, { "total_ns", h.total() }, { "min_ns", h.min() },
        { "max_ns", h.max() }, { "hist", std::move(buckets) } };
}

// Validates every field and the histogram's consistency.
Log2Hist histFromJson(const json& obj, const Path& at);

} // namespace lockscope::detail
