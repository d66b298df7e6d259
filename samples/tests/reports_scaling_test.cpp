// SPDX-License-Identifier: GPL-2.0-or-later
// The harness output as reports/ (and through it the CLI and GUI) reads it:
// readScalingFile() on a real lockscope-scaling run, then a report rendered
// with those curves beside it.
#include <gtest/gtest.h>

#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <string>

#include <nlohmann/json.hpp>

#include "lockscope/reports/input.h"
#include "lockscope/reports/render.h"
#include "lockscope/reports/report.h"
#include "lockscope/reports/scaling.h"
#include "lockscope/scaling/pair.h"

using namespace lockscope;

TEST(HarnessInReports, ScalingFileLoadsAndRendersBesideAReport)
{
    std::string out = testing::TempDir() + "reports-scaling-" + std::to_string(getpid()) + ".json";
    std::string cmd = std::string(LOCKSCOPE_SCALING_EXE) + " --ops 300 --max-threads 2 --output " + out +
                      " > /dev/null";
    int st = std::system(cmd.c_str());
    ASSERT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == 0) << cmd;
    std::vector<reports::ScalingChart> charts = reports::readScalingFile(out);
    std::remove(out.c_str());

    const auto& all = scaling::pairs();
    ASSERT_EQ(charts.size(), all.size());
    for (size_t i = 0; i < all.size(); ++i) {
        const auto& chart = charts[i];
        EXPECT_NE(chart.title.find(all[i].id), std::string::npos) << chart.title;
        ASSERT_EQ(chart.series.size(), 2u) << all[i].id;
        EXPECT_EQ(chart.series[0].name.rfind("before", 0), 0u) << chart.series[0].name;
        EXPECT_EQ(chart.series[1].name.rfind("after", 0), 0u) << chart.series[1].name;
        for (const auto& s : chart.series) {
            ASSERT_EQ(s.points.size(), 2u) << all[i].id;
            EXPECT_EQ(s.points[0].x, 1.0);
            EXPECT_EQ(s.points[1].x, 2.0);
            for (const auto& p : s.points)
                EXPECT_GT(p.y, 0.0) << all[i].id << " " << s.name;
        }
    }

    // The curves travel with a report of a real capture into every format;
    // the JSON one carries them as data.
    Capture capture = reports::loadCapture(LOCKSCOPE_SAMPLE_CAPTURE);
    reports::RenderExtras extras;
    extras.scaling = charts;
    auto report = reports::buildReport(capture);
    auto j = nlohmann::json::parse(reports::render(report, reports::Format::Json, extras));
    ASSERT_EQ(j.at("scaling").size(), all.size());
    EXPECT_EQ(j.at("scaling")[1].at("series")[1].at("points").size(), 2u);
    std::string text = reports::render(report, reports::Format::Text, extras);
    for (const auto& p : all)
        EXPECT_NE(text.find(p.id), std::string::npos) << p.id << " missing from the text report";
}

TEST(HarnessInReports, BadScalingFileIsOneLineError)
{
    std::string bad = testing::TempDir() + "reports-scaling-bad-" + std::to_string(getpid()) + ".json";
    {
        FILE* f = std::fopen(bad.c_str(), "w");
        ASSERT_NE(f, nullptr);
        std::fputs("{\"format\":\"lockscope-scaling\",\"version\":99}", f);
        std::fclose(f);
    }
    try {
        reports::readScalingFile(bad);
        ADD_FAILURE() << "version 99 accepted";
    } catch (const std::runtime_error& e) {
        std::string msg = e.what();
        EXPECT_EQ(msg.find('\n'), std::string::npos) << msg;
        EXPECT_NE(msg.find("version"), std::string::npos) << msg;
    }
    std::remove(bad.c_str());
}
