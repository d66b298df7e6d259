// SPDX-License-Identifier: GPL-2.0-or-later
#include "lockscope/capture/histogram.h"

#include <algorithm>
#include <bit>
#include <cmath>

namespace lockscope {

uint64_t saturatingAdd(uint64_t a, uint64_t b) noexcept
{
    uint64_t r = 0;
    return __builtin_add_overflow(a, b, &r) ? UINT64_MAX : r;
}

unsigned Log2Hist::bucketOf(uint64_t value) noexcept
{
    return value < 2 ? 0u : static_cast<unsigned>(std::bit_width(value) - 1);
}

uint64_t Log2Hist::bucketLow(unsigned bucket) noexcept
{
    return bucket == 0 ? 0 : (uint64_t{1} << bucket);
}

uint64_t Log2Hist::bucketHigh(unsigned bucket) noexcept
{
    return bucket >= kBuckets - 1 ? UINT64_MAX : (uint64_t{1} << (bucket + 1)) - 1;
}

void Log2Hist::add(uint64_t value, uint64_t times) noexcept
{
    if (times == 0)
        return;
    auto& slot = buckets_[bucketOf(value)];
    slot = saturatingAdd(slot, times);
    count_ = saturatingAdd(count_, times);
    uint64_t product = 0;
    total_ = saturatingAdd(total_, __builtin_mul_overflow(value, times, &product) ? UINT64_MAX : product);
    min_ = std::min(min_, value);
    max_ = std::max(max_, value);
}

Log2Hist Log2Hist::fromParts(const std::array<uint64_t, kBuckets>& buckets, uint64_t count,
                             uint64_t total, uint64_t min, uint64_t max) noexcept
{
    Log2Hist h;
    h.buckets_ = buckets;
    h.count_ = count;
    h.total_ = total;
    h.min_ = count ? min : UINT64_MAX;
    h.max_ = count ? max : 0;
    return h;
}

bool Log2Hist::consistent() const noexcept
{
    uint64_t sum = 0;
    unsigned first = kBuckets;
    unsigned last = 0;
    for (unsigned i = 0; i < kBuckets; ++i) {
        if (buckets_[i] == 0)
            continue;
        if (__builtin_add_overflow(sum, buckets_[i], &sum))
            return false;
        first = std::min(first, i);
        last = i;
    }
    if (sum != count_)
        return false;
    if (count_ == 0)
        return total_ == 0 && max_ == 0;
    if (min_ > max_ || bucketOf(min_) != first || bucketOf(max_) != last)
        return false;
    // total lies between count*min and count*max unless it saturated.
    uint64_t lo = 0;
    if (!__builtin_mul_overflow(count_, min_, &lo) && total_ < lo)
        return false;
    uint64_t hi = 0;
    if (!__builtin_mul_overflow(count_, max_, &hi) && total_ > hi)
        return false;
    return true;
}

bool Log2Hist::addSummary(const std::array<uint64_t, kBuckets>& buckets, uint64_t count,
                          uint64_t total, uint64_t min, uint64_t max) noexcept
{
    Log2Hist part = fromParts(buckets, count, total, min, max);
    if (!part.consistent())
        return false;
    merge(part);
    return true;
}

void Log2Hist::merge(const Log2Hist& other) noexcept
{
    if (other.count_ == 0)
        return;
    for (unsigned i = 0; i < kBuckets; ++i)
        buckets_[i] = saturatingAdd(buckets_[i], other.buckets_[i]);
    count_ = saturatingAdd(count_, other.count_);
    total_ = saturatingAdd(total_, other.total_);
    min_ = std::min(min_, other.min_);
    max_ = std::max(max_, other.max_);
}

uint64_t Log2Hist::percentile(double p) const noexcept
{
    if (count_ == 0)
        return 0;
    if (!(p > 0.0))
        return min();
    if (p >= 100.0)
        return max_;
    // Nearest rank, 1-based.
    const double exact = std::ceil(p / 100.0 * static_cast<double>(count_));
    const uint64_t rank = std::clamp<uint64_t>(static_cast<uint64_t>(exact), 1, count_);
    uint64_t seen = 0;
    for (unsigned i = 0; i < kBuckets; ++i) {
        const uint64_t n = buckets_[i];
        if (n == 0 || seen + n < rank) {
            seen += n;
            continue;
        }
        const uint64_t lo = std::max(bucketLow(i), min_);
        const uint64_t hi = std::min(bucketHigh(i), max_);
        if (hi <= lo)
            return lo;
        // Spread the bucket's n samples evenly over [lo, hi]; the k-th of them
        // (1-based) sits at lo + (hi - lo) * (k - 1) / (n - 1).
        const uint64_t k = rank - seen;
        if (n == 1)
            return lo;
        const long double frac = static_cast<long double>(k - 1) / static_cast<long double>(n - 1);
        return lo + static_cast<uint64_t>(static_cast<long double>(hi - lo) * frac);
    }
    return max_;
}

} // namespace lockscope
