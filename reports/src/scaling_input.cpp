// SPDX-License-Identifier: GPL-2.0-or-later
#include "lockscope/reports/scaling.h"

#include <algorithm>

#include "lockscope/scaling_format/scaling_io.h"

namespace lockscope::reports {
namespace {

std::string measuredOn(const scaling::ScalingMeta& m)
{
    return m.hostname + " (" + m.cpu_model + ", " + std::to_string(m.cpus) + " CPUs), " + m.created;
}

std::vector<ScalingChart> chartsOf(const scaling::ScalingRun& run)
{
    std::vector<ScalingChart> charts;
    for (const auto& pair : run.pairs) {
        ScalingChart chart;
        chart.title = pair.title.empty() ? pair.id : pair.title + " (" + pair.id + ")";
        chart.pair_id = pair.id;
        chart.workload = pair.workload;
        chart.measured_on = measuredOn(run.meta);
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

} // namespace

std::vector<ScalingChart> readScalingFile(const std::string& path)
{
    try {
        return chartsOf(scaling::readScaling(path));
    } catch (const scaling::ScalingError& e) {
        throw std::runtime_error(e.what());
    }
}

std::vector<ScalingChart> parseScalingText(std::string_view text, const std::string& name)
{
    try {
        return chartsOf(scaling::parseScaling(text));
    } catch (const scaling::ScalingError& e) {
        throw std::runtime_error(name + ": " + e.what());
    }
}

std::string workloadProgram(const Capture& capture)
{
    if (capture.workload.command.empty())
        return {};
    const std::string& program = capture.workload.command.front();
    return program.substr(program.find_last_of('/') + 1);
}

std::vector<ScalingChart> chartsForWorkload(const std::vector<ScalingChart>& charts, std::string_view workload)
{
    std::vector<ScalingChart> out;
    if (workload.empty())
        return out;
    std::copy_if(charts.begin(), charts.end(), std::back_inserter(out),
                 [&](const ScalingChart& c) { return c.workload == workload; });
    return out;
}

} // namespace lockscope::reports
