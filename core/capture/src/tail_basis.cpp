// SPDX-License-Identifier: GPL-2.0-or-later
#include "lockscope/capture/tail_basis.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <stdexcept>

namespace lockscope {

namespace {

// Waits in the buckets from exact_ns up, where every wait was timed.
uint64_t exactTail(const Log2Hist& wait, uint64_t exact_ns)
{
    if (!exact_ns)
        return 0;
    uint64_t n = 0;
    for (unsigned b = Log2Hist::bucketOf(exact_ns); b < Log2Hist::kBuckets; ++b)
        n += wait.bucket(b);
    return n;
}

TailBasis estimated(const Log2Hist& wait, uint64_t untimed, double beyond)
{
    TailBasis b;
    b.exact = false;
    b.waits = wait.count();
    b.timed = b.waits - std::min(untimed, b.waits);
    b.verdict = double(b.timed) * beyond >= double(kTimedBeyondForVerdict);
    return b;
}

} // namespace

std::string TailBasis::text() const
{
    return exact ? "exact" : "est. from " + std::to_string(timed) + " of " + std::to_string(waits) + " timed";
}

namespace {
constexpr const char* kWaitShare = "wait_share";
}

double waitShare(const Meta& meta)
{
    const auto it = meta.filters.find(kWaitShare);
    if (it == meta.filters.end())
        return 1;
    try {
        const double v = std::stod(it->second);
        return v > 0 && v <= 1 ? v : 1;
    } catch (const std::exception&) {
        return 1; // not a share: nothing claimed
    }
}

void markWaitsSampled(Meta& meta, double share)
{
    char text[32];
    const auto end = std::to_chars(text, text + sizeof text, share, std::chars_format::fixed, 4).ptr;
    meta.filters[kWaitShare] = std::string(text, end);
    meta.filters.erase(kExactWaitNsFilter);
}

uint64_t exactWaitNs(const Meta& meta)
{
    const auto it = meta.filters.find(kExactWaitNsFilter);
    if (it == meta.filters.end())
        return 0;
    try {
        return std::stoull(it->second);
    } catch (const std::exception&) {
        return 0; // not a number: no exact tail claimed
    }
}

TailBasis percentileBasis(const Log2Hist& wait, uint64_t untimed, uint64_t exact_ns, double p)
{
    if (untimed == 0 || wait.empty())
        return {};
    const auto rank = static_cast<uint64_t>(std::ceil(p / 100.0 * double(wait.count())));
    // The rank-th smallest lies among the exact waits when fewer than rank lie below them.
    if (exactTail(wait, exact_ns) > wait.count() - std::max<uint64_t>(rank, 1))
        return {};
    return estimated(wait, untimed, 1.0 - p / 100.0);
}

TailBasis maxBasis(const Log2Hist& wait, uint64_t untimed, uint64_t exact_ns)
{
    if (untimed == 0 || wait.empty() || (exact_ns && wait.max() >= exact_ns))
        return {};
    TailBasis b = estimated(wait, untimed, 0);
    b.verdict = false; // a sample's max says nothing of the waits it left out
    return b;
}

} // namespace lockscope
