// SPDX-License-Identifier: GPL-2.0-or-later
#pragma once

#include <array>
#include <cstdint>
#include <vector>

namespace lockscope {

// A log2 histogram of nanosecond durations, the same layout the BPF side keeps
// in-kernel so that maps can be copied without re-bucketing.
//
// Bucket 0 holds the values 0 and 1; bucket i (1..63) holds [2^i, 2^(i+1) - 1].
// 64 buckets therefore cover the whole uint64_t range with no overflow bucket.
//
// count/total/min/max are exact; percentile() is an estimate whose error is
// bounded by the bucket width: the estimate and the true value always lie in
// the same bucket (and inside [min, max]), so for any value >= 2 the estimate
// is within a factor of 2 of the truth (|est - true| < 2^i for bucket i).
//
// Only the buckets from the first non-empty one to the last are held: real
// histograms fill a dozen of the 64, and a capture holds one to three per lock
// and per call site, so 64 slots made most of a model's memory.
class Log2Hist {
public:
    static constexpr unsigned kBuckets = 64;

    static unsigned bucketOf(uint64_t value) noexcept;
    static uint64_t bucketLow(unsigned bucket) noexcept;
    static uint64_t bucketHigh(unsigned bucket) noexcept;

    void add(uint64_t value, uint64_t times = 1);
    // Adds a bucketed summary as produced by the kernel side. Fails (returns
    // false, leaves *this untouched) when the parts are inconsistent: bucket
    // counts not summing to count, or min/max outside the filled buckets.
    bool addSummary(const std::array<uint64_t, kBuckets>& buckets, uint64_t count, uint64_t total,
                    uint64_t min, uint64_t max);
    void merge(const Log2Hist& other);

    uint64_t count() const noexcept { return count_; }
    // Saturates at UINT64_MAX instead of wrapping.
    uint64_t total() const noexcept { return total_; }
    uint64_t min() const noexcept { return count_ ? min_ : 0; }
    uint64_t max() const noexcept { return max_; }
    uint64_t mean() const noexcept { return count_ ? total_ / count_ : 0; }
    bool empty() const noexcept { return count_ == 0; }
    // Bucket i's count (0..kBuckets-1; 0 outside the filled range).
    uint64_t bucket(unsigned i) const noexcept { return i - first_ < span_.size() ? span_[i - first_] : 0; }
    // All kBuckets counts, made on each call: read one with bucket() in a loop.
    std::array<uint64_t, kBuckets> buckets() const noexcept;

    // Nearest-rank percentile (p in [0, 100]): an estimate of the smallest
    // value v such that at least ceil(p/100 * count) samples are <= v.
    // Interpolates linearly inside the bucket, clamped to [min, max].
    uint64_t percentile(double p) const noexcept;

    // Consistency of a histogram built from untrusted parts (file, map).
    bool consistent() const noexcept;

    bool operator==(const Log2Hist&) const = default;

    // Raw assignment for readers; call consistent() afterwards.
    static Log2Hist fromParts(const std::array<uint64_t, kBuckets>& buckets, uint64_t count,
                              uint64_t total, uint64_t min, uint64_t max);

private:
    // Makes span_ reach buckets lo..hi (new ones 0).
    void cover(unsigned lo, unsigned hi);

    // Buckets first_ .. first_ + span_.size() - 1: empty, or both ends
    // non-zero (so equal histograms hold equal members).
    std::vector<uint64_t> span_;
    unsigned first_ = 0;
    uint64_t count_ = 0;
    uint64_t total_ = 0;
    uint64_t min_ = UINT64_MAX;
    uint64_t max_ = 0;
};

uint64_t saturatingAdd(uint64_t a, uint64_t b) noexcept;

} // namespace lockscope
