// SPDX-License-Identifier: GPL-2.0-or-later
#include "lockscope/record/lock_identity.h"

namespace lockscope::record {

void LockEvidence::add(bool hold, uint64_t n, const std::string* callerKey)
{
    const size_t kind = hold ? 1 : 0;
    events_[kind] += n;
    if (!callerKey)
        return;
    walked_[kind] += n;
    walkedByKey_[*callerKey][kind] += n;
}

std::string LockEvidence::hottestKey() const
{
    std::string best;
    long double bestEvents = -1;
    // walkedByKey_ is ordered by key, so a later key wins only with strictly more.
    for (const auto& [key, walked] : walkedByKey_) {
        long double estimate = 0;
        for (size_t kind = 0; kind < 2; ++kind)
            if (walked_[kind])
                estimate += static_cast<long double>(events_[kind]) * walked[kind] / walked_[kind];
        if (estimate > bestEvents) {
            bestEvents = estimate;
            best = key;
        }
    }
    return best;
}

} // namespace lockscope::record
