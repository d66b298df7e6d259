// SPDX-License-Identifier: GPL-2.0-or-later
#include <gtest/gtest.h>

#include <sstream>

#include "lockscope/capture/io.h"
#include "lockscope/reports/exchange.h"
#include "test_support.h"

using namespace lockscope;
using namespace lockscope::reports;

TEST(Exchange, RegistryNamesEveryFormat)
{
    for (const char* n : {"folded", "pprof", "speedscope"})
        ASSERT_NE(findExporter(n), nullptr) << n;
    for (const char* n : {"perf-script", "lock-stat"})
        ASSERT_NE(findImporter(n), nullptr) << n;
    EXPECT_EQ(findExporter("svg"), nullptr);
}

TEST(Exchange, FoldedLinesSumToTheWeights)
{
    const Capture c = readCapture(test::fixture("baseline.lockscope.json"));
    const std::string folded = findExporter("folded")->write(c, {Weight::Wait});
    std::istringstream in(folded);
    uint64_t sum = 0;
    for (std::string line; std::getline(in, line);) {
        const auto sp = line.rfind(' ');
        ASSERT_NE(sp, std::string::npos) << line;
        sum += std::stoull(line.substr(sp + 1));
        EXPECT_EQ(line[sp - 1], ']') << "lock key is the leaf frame: " << line;
    }
    uint64_t total = 0;
    for (const auto& l : c.locks)
        for (const auto& s : l.sites)
            total += s.wait.total();
    EXPECT_EQ(sum, total);
}

TEST(Exchange, SpeedscopeFollowsTheFileFormatSchema)
{
    const Capture c = readCapture(test::fixture("baseline.lockscope.json"));
    const auto doc = nlohmann::json::parse(findExporter("speedscope")->write(c, {Weight::Wait}));
    EXPECT_EQ(doc.at("$schema"), "https://www.speedscope.app/file-format-schema.json");
    const auto& frames = doc.at("shared").at("frames");
    ASSERT_TRUE(frames.is_array());
    for (const auto& f : frames)
        EXPECT_TRUE(f.at("name").is_string());
    const auto& profiles = doc.at("profiles");
    ASSERT_GE(profiles.size(), 2u);
    for (const auto& p : profiles) {
        EXPECT_EQ(p.at("type"), "sampled");
        EXPECT_EQ(p.at("unit"), "nanoseconds");
        ASSERT_EQ(p.at("samples").size(), p.at("weights").size());
        uint64_t sum = 0;
        for (const auto& w : p.at("weights"))
            sum += w.get<uint64_t>();
        EXPECT_EQ(sum, p.at("endValue").get<uint64_t>());
        for (const auto& s : p.at("samples"))
            for (const auto& idx : s)
                EXPECT_LT(idx.get<size_t>(), frames.size());
    }
    EXPECT_LT(doc.at("activeProfileIndex").get<size_t>(), profiles.size());
}
