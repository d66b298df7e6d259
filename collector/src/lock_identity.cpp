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

long double LockEvidence::estimate(const std::array<uint64_t, 2>& walked) const
{
    long double events = 0;
    for (size_t kind = 0; kind < 2; ++kind)
        if (walked_[kind])
            events += static_cast<long double>(events_[kind]) * walked[kind] / walked_[kind];
    return events;
}

std::string LockEvidence::hottestKey() const
{
    std::string best;
    long double bestEvents = -1;
    // walkedByKey_ is ordered by key, so a later key wins only with strictly more.
    for (const auto& [key, walked] : walkedByKey_)
        if (const long double e = estimate(walked); e > bestEvents) {
            bestEvents = e;
            best = key;
        }
    return best;
}

std::string LockEvidence::keyKeeping(const std::string& lately) const
{
    std::string hottest = hottestKey();
    const auto kept = walkedByKey_.find(lately);
    if (kept == walkedByKey_.end() || hottest == lately)
        return hottest;
    return 2 * estimate(kept->second) >= estimate(walkedByKey_.at(hottest)) ? lately : hottest;
}

} // namespace lockscope::record
