// SPDX-License-Identifier: GPL-2.0-or-later
// The g++ build's stand-in for the fuzzer: hostile inputs give a Capture or a
// CaptureError, never a crash, a hang or another exception type.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "lockscope/capture/io.h"
#include "sample_capture.h"

namespace lockscope {
namespace {

namespace fs = std::filesystem;

// 0 = accepted, 1 = CaptureError; anything else escapes and fails the test.
int outcome(std::string_view text)
{
    try {
        parseCapture(text);
        return 0;
    } catch (const CaptureError& e) {
        EXPECT_EQ(std::string(e.what()).find('\n'), std::string::npos);
        return 1;
    }
}

std::vector<std::string> seeds()
{
    std::vector<std::string> out;
    const fs::path root = LOCKSCOPE_CAPTURE_FIXTURES;
    for (const auto& dir : { root, root / "malformed" })
        for (const auto& entry : fs::directory_iterator(dir))
            if (entry.is_regular_file() && entry.path().extension() == ".json") {
                std::ifstream in(entry.path(), std::ios::binary);
                std::stringstream ss;
                ss << in.rdbuf();
                out.push_back(ss.str());
            }
    return out;
}

TEST(CaptureRobustness, EveryFixtureGivesACaptureOrAnError)
{
    const auto all = seeds();
    ASSERT_GE(all.size(), 22u);
    int accepted = 0;
    for (const auto& s : all)
        accepted += outcome(s) == 0;
    EXPECT_EQ(accepted, 3) << "only baseline, patched and owners are valid";
}

TEST(CaptureRobustness, TruncationAtEvery97thByte)
{
    const std::string base = toJson(testing::makeSemopCapture(testing::SemopScenario::Baseline)).dump();
    for (size_t cut = 0; cut < base.size(); cut += 97)
        EXPECT_EQ(outcome(std::string_view(base).substr(0, cut)), 1) << "cut at " << cut;
}

TEST(CaptureRobustness, ByteFlips)
{
    const std::string base = toJson(testing::makeSemopCapture(testing::SemopScenario::Baseline)).dump();
    testing::Rng rng(99);
    int errors = 0;
    for (int round = 0; round < 3000; ++round) {
        std::string m = base;
        const int flips = 1 + static_cast<int>(rng.below(4));
        for (int f = 0; f < flips; ++f) {
            const auto at = static_cast<size_t>(rng.below(m.size()));
            m[at] = static_cast<char>(rng.below(256));
        }
        errors += outcome(m);
    }
    EXPECT_GT(errors, 1000) << "most random flips must be caught";
}

TEST(CaptureRobustness, DeepNestingIsStoppedEarly)
{
    for (const char* open : { "[", "{\"a\":" }) {
        std::string deep;
        for (int i = 0; i < 100000; ++i)
            deep += open;
        EXPECT_EQ(outcome(deep), 1);
        // Inside a valid document, where the free-form results would take it.
        std::string doc = toJson(testing::makeSemopCapture(testing::SemopScenario::Patched)).dump();
        const auto at = doc.find("\"results\":{") + 11;
        doc.insert(at, "\"deep\":" + deep);
        EXPECT_EQ(outcome(doc), 1);
    }
}

TEST(CaptureRobustness, HugeAndOddNumbers)
{
    std::string doc = toJson(testing::makeSemopCapture(testing::SemopScenario::Patched)).dump();
    for (const char* number : { "1e400", "123456789012345678901234567890", "-99999999999999999999", "0.0",
             "1E2", "NaN", "Infinity", "0x10" }) {
        std::string m = doc;
        const auto at = m.find("\"events\":") + 9;
        const auto end = m.find(',', at);
        m.replace(at, end - at, number);
        EXPECT_EQ(outcome(m), 1) << number;
    }
}

// parseCapture converts stacks and locks while parsing; fromJson validates a
// finished DOM. Both must agree on what is valid and on the result.
TEST(CaptureRobustness, StreamingReaderAgreesWithDomReader)
{
    const std::string base = toJson(testing::makeSemopCapture(testing::SemopScenario::Baseline)).dump();
    testing::Rng rng(1234);
    int compared = 0;
    for (int round = 0; round < 2000; ++round) {
        std::string m = base;
        const auto at = static_cast<size_t>(rng.below(m.size()));
        m[at] = "0123456789-\"[]{},:ex"[rng.below(21)];
        nlohmann::json doc;
        try {
            doc = nlohmann::json::parse(m);
        } catch (const nlohmann::json::exception&) {
            continue;
        }
        ++compared;
        std::optional<Capture> a, b;
        std::string ea, eb;
        try {
            a = parseCapture(m);
        } catch (const CaptureError& e) {
            ea = e.what();
        }
        try {
            b = fromJson(doc);
        } catch (const CaptureError& e) {
            eb = e.what();
        }
        ASSERT_EQ(a.has_value(), b.has_value()) << "streaming: " << ea << " | dom: " << eb;
        if (a)
            EXPECT_EQ(*a, *b);
        else
            EXPECT_EQ(ea, eb); // one change, one error: both name the same path
    }
    EXPECT_GT(compared, 200);
}

TEST(CaptureRobustness, MemberOrderDoesNotMatter)
{
    const Capture c = testing::makeSemopCapture(testing::SemopScenario::Baseline);
    const nlohmann::json doc = toJson(c);
    // nlohmann::json sorts members: cpu, format, functions, locks, meta, ..., stacks, ..., version, so
    // locks come before stacks and format/version are not first.
    EXPECT_EQ(parseCapture(doc.dump()), c);
    // The writer's order (format, version, ..., stacks, locks) takes the streaming path.
    nlohmann::ordered_json ordered;
    for (const char* k : { "format", "version", "meta", "probes", "stats", "stacks", "locks", "syscalls",
             "functions", "cpu", "workload" })
        ordered[k] = doc.at(k);
    EXPECT_EQ(parseCapture(ordered.dump()), c);
    // Locks before stacks: stacks stream, locks wait for the end.
    nlohmann::ordered_json locksFirst;
    for (const char* k : { "format", "version", "locks", "stacks", "meta", "probes", "stats", "syscalls",
             "functions", "cpu", "workload" })
        locksFirst[k] = doc.at(k);
    EXPECT_EQ(parseCapture(locksFirst.dump()), c);
    // A newer version with stacks the reader cannot read still says "newer".
    ordered["version"] = kCaptureVersionNewest + 1;
    ordered["stacks"][0]["frames"] = 7;
    try {
        parseCapture(ordered.dump());
        FAIL() << "accepted";
    } catch (const CaptureError& e) {
        EXPECT_EQ(std::string(e.what()),
            "format version 3 is newer than this lockscope reads (2): upgrade lockscope");
    }
    // The compact layout in the writer's order streams; symbols after stacks waits for the end.
    const nlohmann::json compact = toJson(c, CaptureLayout::Compact);
    for (const char* symbolsBefore : { "stacks", "locks", "syscalls" }) {
        nlohmann::ordered_json o;
        for (const char* k : { "format", "version", "meta", "probes", "stats", "stacks", "locks", "syscalls",
                 "functions", "cpu", "workload" }) {
            if (std::string(k) == symbolsBefore)
                o["symbols"] = compact.at("symbols");
            o[k] = compact.at(k);
        }
        EXPECT_EQ(parseCapture(o.dump()), c) << "symbols before " << symbolsBefore;
    }
}

TEST(CaptureRobustness, StreamedSectionsCheckEveryElement)
{
    const nlohmann::json doc = toJson(testing::makeSemopCapture(testing::SemopScenario::Baseline));
    nlohmann::ordered_json ordered;
    for (const char* k : { "format", "version", "meta", "probes", "stats", "stacks", "locks", "syscalls",
             "functions", "cpu", "workload" })
        ordered[k] = doc.at(k);
    const auto errorWith = [&](const char* section, size_t index, const nlohmann::ordered_json& value) {
        nlohmann::ordered_json m = ordered;
        m[section][index] = value;
        try {
            parseCapture(m.dump());
        } catch (const CaptureError& e) {
            return std::string(e.what());
        }
        return std::string("(accepted)");
    };
    EXPECT_EQ(errorWith("stacks", 2, 1), "stacks[2]: expected an object, got 1");
    EXPECT_EQ(errorWith("stacks", 0, nullptr), "stacks[0]: expected an object, got null");
    EXPECT_EQ(errorWith("locks", 3, "x"), "locks[3]: expected an object, got a string \"x\"");
    EXPECT_EQ(
        errorWith("locks", 1, nlohmann::ordered_json::array()), "locks[1]: expected an object, got an array");
}

TEST(CaptureRobustness, DuplicateSectionsAreRefused)
{
    std::string text = toJson(testing::makeSemopCapture(testing::SemopScenario::Baseline)).dump();
    text.insert(1, "\"stacks\":[],");
    try {
        parseCapture(text);
        FAIL() << "accepted";
    } catch (const CaptureError& e) {
        EXPECT_EQ(std::string(e.what()), "stacks: appears twice in the document");
    }
}

TEST(CaptureRobustness, FromJsonBoundsFreeFormDepthToo)
{
    // Documents built in code skip the parser's depth guard.
    auto doc = toJson(testing::makeSemopCapture(testing::SemopScenario::Patched));
    nlohmann::json deep = nlohmann::json::array();
    for (int i = 0; i < 100; ++i)
        deep = nlohmann::json::array({ deep });
    doc["workload"]["results"]["deep"] = deep;
    try {
        fromJson(doc);
        FAIL() << "accepted";
    } catch (const CaptureError& e) {
        EXPECT_EQ(std::string(e.what()), "workload.results: nested deeper than 32 levels");
    }
}

} // namespace
} // namespace lockscope
