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

namespace {
// Room for buckets lo..hi in a span that held `old` from `oldFirst` (empty: none).
std::vector<uint64_t> widened(const std::vector<uint64_t>& old, unsigned oldFirst, unsigned lo, unsigned hi)
{
    std::vector<uint64_t> span(hi - lo + 1, 0);
    std::copy(old.begin(), old.end(), span.begin() + (oldFirst - lo));
    return span;
}
} // namespace

void Log2Hist::cover(unsigned lo, unsigned hi)
{
    if (span_.empty()) {
        span_.assign(hi - lo + 1, 0);
        first_ = lo;
        return;
    }
    const unsigned last = first_ + unsigned(span_.size()) - 1;
    if (lo >= first_ && hi <= last)
        return;
    lo = std::min(lo, first_);
    span_ = widened(span_, first_, lo, std::max(hi, last));
    first_ = lo;
}

std::array<uint64_t, Log2Hist::kBuckets> Log2Hist::buckets() const noexcept
{
    std::array<uint64_t, kBuckets> all{};
    std::copy(span_.begin(), span_.end(), all.begin() + first_);
    return all;
}

void Log2Hist::add(uint64_t value, uint64_t times)
{
    if (times == 0)
        return;
    const unsigned b = bucketOf(value);
    cover(b, b);
    auto& slot = span_[b - first_];
    slot = saturatingAdd(slot, times);
    count_ = saturatingAdd(count_, times);
    uint64_t product = 0;
    total_ = saturatingAdd(total_, __builtin_mul_overflow(value, times, &product) ? UINT64_MAX : product);
    min_ = std::min(min_, value);
    max_ = std::max(max_, value);
}

Log2Hist Log2Hist::fromParts(const std::array<uint64_t, kBuckets>& buckets, uint64_t count,
                             uint64_t total, uint64_t min, uint64_t max)
{
    Log2Hist h;
    const auto nonZero = [](uint64_t b) { return b != 0; };
    const auto first = std::find_if(buckets.begin(), buckets.end(), nonZero);
    if (first != buckets.end()) {
        const auto last = std::find_if(buckets.rbegin(), buckets.rend(), nonZero).base();
        h.span_.assign(first, last);
        h.first_ = unsigned(first - buckets.begin());
    }
    h.count_ = count;
    h.total_ = total;
    h.min_ = count ? min : UINT64_MAX;
    h.max_ = count ? max : 0;
    return h;
}

bool Log2Hist::consistent() const noexcept
{
    uint64_t sum = 0;
    for (uint64_t b : span_)
        if (__builtin_add_overflow(sum, b, &sum))
            return false;
    const unsigned first = first_, last = first_ + unsigned(span_.size()) - 1;
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
                          uint64_t total, uint64_t min, uint64_t max)
{
    Log2Hist part = fromParts(buckets, count, total, min, max);
    if (!part.consistent())
        return false;
    merge(part);
    return true;
}

void Log2Hist::merge(const Log2Hist& other)
{
    if (other.count_ == 0)
        return;
    if (!other.span_.empty()) {
        cover(other.first_, other.first_ + unsigned(other.span_.size()) - 1);
        for (size_t i = 0; i < other.span_.size(); ++i) {
            uint64_t& slot = span_[other.first_ - first_ + i];
            slot = saturatingAdd(slot, other.span_[i]);
        }
    }
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
    for (unsigned i = first_; i < first_ + span_.size(); ++i) {
        const uint64_t n = span_[i - first_];
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
