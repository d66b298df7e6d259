// SPDX-License-Identifier: GPL-2.0-or-later
#include "lockscope/reports/scaling.h"

#include "lockscope/scaling_format/scaling_io.h"

namespace lockscope::reports {

std::vector<ScalingChart> readScalingFile(const std::string& path)
{
    scaling::ScalingRun run;
    try {
        run = scaling::readScaling(path);
    } catch (const scaling::ScalingError& e) {
        throw std::runtime_error(e.what());
    }
    std::vector<ScalingChart> charts;
    for (const auto& pair : run.pairs) {
        ScalingChart chart;
        chart.title = pair.title.empty() ? pair.id : pair.title + " (" + pair.id + ")";
        for (const auto& v : pair.variants) {
            ScalingSeries s;
            s.name = v.name + (v.description.empty() ? "" : ": " + v.description);
            for (const auto& p : v.points)
                s.points.push_back({double(p.threads), p.ops_per_sec});
            chart.series.push_back(std::move(s));
        }
        charts.push_back(std::move(chart));
    }
    return charts;
}

} // namespace lockscope::reports
