// SPDX-License-Identifier: GPL-2.0-or-later
#include "histogram_json.h"

#include <algorithm>
#include <array>
#include <string>

namespace lockscope::detail {
namespace {

std::string bucketRange(unsigned b)
{
    return "bucket " + std::to_string(b) + " = [" + std::to_string(Log2Hist::bucketLow(b)) + ", "
        + std::to_string(Log2Hist::bucketHigh(b)) + "]";
}

// Says which part of an inconsistent histogram is wrong, in the order a
// reader would check it by hand.
std::string histProblem(const std::array<uint64_t, Log2Hist::kBuckets>& b, uint64_t count, uint64_t total,
    uint64_t min, uint64_t max)
{
    uint64_t sum = 0;
    bool overflow = false;
    unsigned first = Log2Hist::kBuckets;
    unsigned last = 0;
    for (unsigned i = 0; i < Log2Hist::kBuckets; ++i) {
        if (!b[i])
            continue;
        overflow |= __builtin_add_overflow(sum, b[i], &sum);
        first = std::min(first, i);
        last = i;
    }
    if (overflow)
        return "bucket counts overflow 64 bits";
    if (sum != count)
        return "bucket counts sum to " + std::to_string(sum) + " but count is " + std::to_string(count);
    if (count == 0)
        return "an empty histogram (count 0) must have total_ns, min_ns and max_ns 0";
    if (min > max)
        return "min_ns " + std::to_string(min) + " > max_ns " + std::to_string(max);
    if (Log2Hist::bucketOf(min) != first)
        return "min_ns " + std::to_string(min) + " is not in the first non-empty " + bucketRange(first);
    if (Log2Hist::bucketOf(max) != last)
        return "max_ns " + std::to_string(max) + " is not in the last non-empty " + bucketRange(last);
    return "total_ns " + std::to_string(total) + " is outside [count*min_ns, count*max_ns]";
}

// All 64 counts, as version 1 writes them.
void fullBuckets(const json& hist, const Path& hp, std::array<uint64_t, Log2Hist::kBuckets>& buckets)
{
    if (!hist.is_array())
        fail(hp, "expected an array of 64 integers, got " + describe(hist));
    if (hist.size() != Log2Hist::kBuckets)
        fail(hp, "expected 64 integers, got " + std::to_string(hist.size()));
    for (unsigned i = 0; i < Log2Hist::kBuckets; ++i)
        buckets[i] = toU64(hist[i], hp[i]);
}

// The non-empty ones as [bucket, count, ...], buckets ascending (compact layout).
void sparseBuckets(const json& hist, const Path& hp, std::array<uint64_t, Log2Hist::kBuckets>& buckets)
{
    if (!hist.is_array())
        fail(hp, "expected an array of [bucket, count] pairs, got " + describe(hist));
    if (hist.size() % 2 != 0)
        fail(hp, "expected [bucket, count] pairs, got " + std::to_string(hist.size()) + " integers");
    uint64_t next = 0; // the lowest bucket the next pair may name
    for (size_t i = 0; i < hist.size(); i += 2) {
        const uint64_t b = toU64(hist[i], hp[i], Log2Hist::kBuckets - 1);
        if (b < next)
            fail(hp[i], "bucket " + std::to_string(b) + " out of order (buckets ascend, each once)");
        const uint64_t n = toU64(hist[i + 1], hp[i + 1]);
        if (n == 0)
            fail(hp[i + 1], "bucket " + std::to_string(b) + " listed with count 0 (only non-empty buckets are)");
        buckets[b] = n;
        next = b + 1;
    }
}

} // namespace

Log2Hist histFromJson(const json& obj, const Path& at, const Encoding& enc)
{
    expectObject(obj, at);
    const uint64_t count = u64At(obj, at, "count");
    const uint64_t total = u64At(obj, at, "total_ns");
    const uint64_t min = u64At(obj, at, "min_ns");
    const uint64_t max = u64At(obj, at, "max_ns");
    const char* name = enc.compact ? "buckets" : "hist";
    const json& hist = member(obj, at, name);
    const Path hp = at / name;
    std::array<uint64_t, Log2Hist::kBuckets> buckets {};
    if (enc.compact)
        sparseBuckets(hist, hp, buckets);
    else
        fullBuckets(hist, hp, buckets);
    const Log2Hist h = Log2Hist::fromParts(buckets, count, total, min, max);
    if (!h.consistent() || (count == 0 && min != 0))
        fail(at, "inconsistent histogram: " + histProblem(buckets, count, total, min, max));
    return h;
}

} // namespace lockscope::detail
