// SPDX-License-Identifier: GPL-2.0-or-later
#pragma once

#include <nlohmann/json.hpp>

#include "capture_encoding.h"
#include "json_access.h"
#include "lockscope/capture/histogram.h"

// A Log2Hist as the capture format holds it (docs/capture-format.md):
// count, total_ns, min_ns, max_ns and the bucket counts: all 64 as "hist",
// or in the compact layout the non-empty ones as "buckets": [bucket, count,
// bucket, count, ...].
namespace lockscope::detail {

// J is ordered_json for the writer (fields in format order) or json for toJson().
template <class J> J histToJson(const Log2Hist& h, bool compact = false)
{
    J buckets = J::array();
    for (unsigned i = 0; i < Log2Hist::kBuckets; ++i) {
        const uint64_t b = h.bucket(i);
        if (!compact) {
            buckets.push_back(b);
        } else if (b) {
            buckets.push_back(i);
            buckets.push_back(b);
        }
    }
    return J { { "count", h.count() }, { "total_ns", h.total() }, { "min_ns", h.min() },
        { "max_ns", h.max() }, { compact ? "buckets" : "hist", std::move(buckets) } };
}

// Validates every field and the histogram's consistency.
Log2Hist histFromJson(const json& obj, const Path& at, const Encoding& enc);

} // namespace lockscope::detail
