// SPDX-License-Identifier: GPL-2.0-or-later
#include "stats_json.h"

namespace lockscope::detail {

Stats statsFromJson(const json& j, const Path& at)
{
    expectObject(j, at);
    Stats s;
    for (const StatsField& f : kStatsFields)
        if (f.always || optionalMember(j, f.name))
            s.*f.counter = u64At(j, at, f.name);
    return s;
}

} // namespace lockscope::detail
