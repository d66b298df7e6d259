// SPDX-License-Identifier: GPL-2.0-or-later
#include <gtest/gtest.h>

#include <optional>

#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "lockscope/capture/io.h"
#include "sample_capture.h"

namespace lockscope {
namespace {

const std::string kMalformed = std::string(LOCKSCOPE_CAPTURE_FIXTURES) + "/malformed";

struct Expected {
    std::string file;
    std::string schema;
    std::string message;
};

std::vector<Expected> loadExpected()
{
    std::vector<Expected> out;
    std::ifstream in(kMalformed + "/expected-errors.tsv");
    std::string line;
    while (std::getline(in, line)) {
        if (line.empty() || line[0] == '#')
            continue;
        const auto a = line.find('\t');
        const auto b = line.find('\t', a + 1);
        out.push_back({ line.substr(0, a), line.substr(a + 1, b - a - 1), line.substr(b + 1) });
    }
    return out;
}

// One test per malformed-input class, each asserting the exact one-line message.
class MalformedFixture : public ::testing::TestWithParam<Expected> { };

TEST_P(MalformedFixture, ReaderGivesTheExactOneLineMessage)
{
    const Expected& e = GetParam();
    const std::string path = kMalformed + "/" + e.file;
    try {
        readCapture(path);
        FAIL() << e.file << " was accepted";
    } catch (const CaptureError& err) {
        const std::string what = err.what();
        EXPECT_EQ(what, path + ": " + e.message);
        EXPECT_EQ(what.find('\n'), std::string::npos);
    }
}

std::string caseName(const ::testing::TestParamInfo<Expected>& info)
{
    std::string n = info.param.file.substr(0, info.param.file.find('.'));
    for (char& c : n)
        if (!std::isalnum(static_cast<unsigned char>(c)))
            c = '_';
    return n;
}

INSTANTIATE_TEST_SUITE_P(Classes, MalformedFixture, ::testing::ValuesIn(loadExpected()), caseName);

TEST(MalformedFixtures, ManifestCoversEveryFile)
{
    EXPECT_GE(loadExpected().size(), 20u);
}

// In-memory variants: edit one field of a valid document, expect one message.
nlohmann::json validDoc()
{
    return toJson(testing::makeSemopCapture(testing::SemopScenario::Baseline));
}

std::string errorOf(const nlohmann::json& doc)
{
    try {
        fromJson(doc);
    } catch (const CaptureError& e) {
        return e.what();
    }
    return "(accepted)";
}

std::string errorOfText(std::string_view text, const ReadLimits& limits = {})
{
    try {
        parseCapture(text, limits);
    } catch (const CaptureError& e) {
        return e.what();
    }
    return "(accepted)";
}

TEST(CaptureValidation, UnknownFieldsAreIgnored)
{
    auto doc = validDoc();
    doc["future_section"] = { { "x", 1 } };
    doc["locks"][0]["future_field"] = "y";
    doc["meta"]["future"] = nullptr;
    EXPECT_EQ(fromJson(doc), testing::makeSemopCapture(testing::SemopScenario::Baseline));
}

TEST(CaptureValidation, VersionAndFormat)
{
    auto doc = validDoc();
    doc["version"] = 0;
    EXPECT_EQ(errorOf(doc), "version: format version 0 is not valid (this lockscope reads 1 to 2)");
    doc["version"] = -3;
    EXPECT_EQ(errorOf(doc), "version: format version -3 is not valid (this lockscope reads 1 to 2)");
    doc["version"] = "1";
    EXPECT_EQ(errorOf(doc), "version: expected an integer format version, got a string \"1\"");
    doc["version"] = 1000000;
    EXPECT_EQ(
        errorOf(doc), "format version 1000000 is newer than this lockscope reads (2): upgrade lockscope");
    doc.erase("format");
    EXPECT_EQ(errorOf(doc), "format: missing (required field)");
}

// A wrong format or version is its own error type, carrying what the file
// says and what this lockscope reads, so that a caller comparing files can
// name both versions without reading them again.
TEST(CaptureValidation, VersionErrorCarriesFoundAndSupported)
{
    auto versionError = [](const nlohmann::json& doc) {
        try {
            fromJson(doc);
        } catch (const CaptureVersionError& e) {
            return std::optional<CaptureVersionError>(e);
        } catch (const CaptureError&) {
        }
        return std::optional<CaptureVersionError>();
    };
    auto doc = validDoc();
    doc["version"] = kCaptureVersionNewest + 1;
    auto e = versionError(doc);
    ASSERT_TRUE(e);
    EXPECT_TRUE(e->isCapture());
    EXPECT_EQ(e->found_version, std::to_string(kCaptureVersionNewest + 1));
    EXPECT_EQ(e->supported_version, kCaptureVersionNewest);
    doc["version"] = "1";
    e = versionError(doc);
    ASSERT_TRUE(e);
    EXPECT_EQ(e->found_version, "a string \"1\"");
    doc = validDoc();
    doc["format"] = "perf-data";
    e = versionError(doc);
    ASSERT_TRUE(e);
    EXPECT_FALSE(e->isCapture());
    EXPECT_EQ(e->found_format, "perf-data");
    EXPECT_EQ(e->found_version, std::to_string(kCaptureVersion));
    doc.erase("format");
    EXPECT_TRUE(versionError(doc)) << "a missing format is not a capture either";
    // Any other problem is a plain CaptureError.
    doc = validDoc();
    doc["stats"]["lost"] = -1;
    EXPECT_FALSE(versionError(doc));
}

// The streaming reader stops at the header of a file it cannot read, rather
// than building the whole DOM of a newer capture first: what follows the
// header is never looked at.
TEST(CaptureValidation, NewerVersionStopsAtTheHeader)
{
    try {
        parseCapture(R"({"format": "lockscope-capture", "version": 7, "meta": [[[ not json at all)");
        FAIL() << "accepted";
    } catch (const CaptureVersionError& e) {
        EXPECT_EQ(std::string(e.what()), "format version 7 is newer than this lockscope reads (2): upgrade lockscope");
        EXPECT_EQ(e.found_version, "7");
    }
    try {
        parseCapture(R"({"version": 1, "format": "perf-data", "locks": [[[ not json)");
        FAIL() << "accepted";
    } catch (const CaptureVersionError& e) {
        EXPECT_FALSE(e.isCapture());
        EXPECT_EQ(e.found_format, "perf-data");
    }
}

TEST(CaptureValidation, IntegersAndRanges)
{
    auto doc = validDoc();
    doc["stacks"][0]["id"] = 4294967296ull;
    EXPECT_EQ(errorOf(doc), "stacks[0].id: out of range: 4294967296 > 4294967295");
    doc = validDoc();
    doc["workload"]["exit_status"] = 3000000000ull;
    EXPECT_EQ(errorOf(doc), "workload.exit_status: integer out of range, got 3000000000");
    doc = validDoc();
    doc["workload"]["signal"] = 0;
    EXPECT_EQ(errorOf(doc), "workload.signal: expected a positive signal number, got 0");
    doc = validDoc();
    doc["meta"]["duration_s"] = -1.0;
    EXPECT_EQ(errorOf(doc), "meta.duration_s: expected a finite non-negative number, got -1");
    doc = validDoc();
    doc["locks"][0]["instances"] = 0;
    EXPECT_EQ(errorOf(doc), "locks[0].instances: must be at least 1");
    doc = validDoc();
    doc["locks"][0]["wait"]["hist"][5] = -1;
    EXPECT_EQ(errorOf(doc), "locks[0].wait.hist[5]: expected a non-negative integer, got -1");
    doc = validDoc();
    doc["stats"]["map_full"] = true;
    EXPECT_EQ(errorOf(doc), "stats.map_full: expected a non-negative integer, got true");
}

TEST(CaptureValidation, HistogramConsistency)
{
    auto doc = validDoc();
    auto& w = doc["locks"][1]["wait"];
    w["min_ns"] = 1;
    EXPECT_EQ(errorOf(doc).substr(0, 60), "locks[1].wait: inconsistent histogram: min_ns 1 is not in th");
    doc = validDoc();
    doc["locks"][1]["wait"]["max_ns"] = 0;
    EXPECT_NE(errorOf(doc).find("locks[1].wait: inconsistent histogram: min_ns"), std::string::npos);
    doc = validDoc();
    doc["locks"][1]["wait"]["total_ns"] = 1;
    EXPECT_NE(errorOf(doc).find("total_ns 1 is outside [count*min_ns, count*max_ns]"), std::string::npos);
    doc = validDoc();
    doc["locks"][3]["hold"]["min_ns"] = 5; // the empty hold histogram of rwsem@ipcget
    EXPECT_EQ(errorOf(doc),
        "locks[3].hold: inconsistent histogram: an empty histogram (count 0) must have "
        "total_ns, min_ns and max_ns 0");
    doc = validDoc();
    doc["syscalls"][0]["latency"]["hist"] = "lots";
    EXPECT_EQ(
        errorOf(doc), "syscalls[0].latency.hist: expected an array of 64 integers, got a string \"lots\"");
}

TEST(CaptureValidation, CrossReferences)
{
    auto doc = validDoc();
    doc["locks"][0]["sites"][0]["user_stack_id"] = 12; // a kernel stack
    EXPECT_EQ(
        errorOf(doc), "locks[0].sites[0].user_stack_id: stack 12 is a kernel stack, expected a user stack");
    doc = validDoc();
    doc["syscalls"][1]["name"] = "semop";
    EXPECT_EQ(errorOf(doc), "syscalls[1].name: duplicate name \"semop\" (also at index 0)");
    doc = validDoc();
    doc["probes"][3]["name"] = "lock_contention";
    EXPECT_EQ(errorOf(doc), "probes[3].name: duplicate probe \"lock_contention\" (also at probes[0])");
    doc = validDoc();
    doc["syscalls"][0]["errors"] = 99999999;
    EXPECT_EQ(errorOf(doc), "syscalls[0].errors: 99999999 errors but only 4123456 calls");
    doc = validDoc();
    doc["cpu"]["lock_samples"] = 80000;
    EXPECT_EQ(errorOf(doc), "cpu.lock_samples: 80000 exceeds samples (79920)");
    doc = validDoc();
    doc["cpu"]["top_leaves"][1]["samples"] = 50000;
    EXPECT_EQ(errorOf(doc), "cpu.top_leaves[1].samples: top_leaves must be sorted by samples, descending");
}

TEST(CaptureValidation, StringsAndShapes)
{
    auto doc = validDoc();
    doc["probes"][2]["reason"] = "";
    EXPECT_EQ(errorOf(doc), "probes[2].reason: a skipped probe needs the reason it was skipped");
    doc = validDoc();
    doc["meta"]["start_time"] = "yesterday";
    EXPECT_EQ(errorOf(doc),
        "meta.start_time: expected an RFC 3339 time such as \"2024-05-01T12:00:00Z\" or \"\", got "
        "\"yesterday\"");
    doc["meta"]["start_time"] = "2025-03-14T09:26:53.123+01:00";
    EXPECT_EQ(errorOf(doc), "(accepted)");
    doc = validDoc();
    doc["meta"]["kernel_build_id"] = "xyz";
    EXPECT_EQ(errorOf(doc), "meta.kernel_build_id: expected hex digits or \"\", got \"xyz\"");
    doc = validDoc();
    doc["stacks"][1]["frames"] = nlohmann::json::array();
    EXPECT_EQ(errorOf(doc), "stacks[1].frames: a stack needs at least one frame");
    doc = validDoc();
    doc["stacks"][1]["frames"][0]["address"] = "0xfffffffff81000000"; // 17 digits
    EXPECT_EQ(errorOf(doc),
        "stacks[1].frames[0].address: expected a hex address \"0x\" + 1..16 hex digits, got a "
        "string \"0xfffffffff81000000\"");
    doc = validDoc();
    doc["meta"]["filters"]["x"] = 3;
    EXPECT_EQ(errorOf(doc), "meta.filters: filter \"x\": expected a string value, got 3");
    doc = validDoc();
    doc["workload"]["results"] = nlohmann::json::array();
    EXPECT_EQ(errorOf(doc), "workload.results: expected an object, got an array");
    doc = validDoc();
    doc["locks"] = nlohmann::json::object();
    EXPECT_EQ(errorOf(doc), "locks: expected an array, got an object");
    // Hostile strings are quoted printable and cut, keeping the message one line.
    doc = validDoc();
    doc["stacks"][0]["kind"] = std::string("a\nb") + std::string(500, 'x');
    const std::string m = errorOf(doc);
    EXPECT_EQ(m.find('\n'), std::string::npos);
    EXPECT_LT(m.size(), 200u);
    EXPECT_EQ(m.substr(0, 55), "stacks[0].kind: expected \"kernel\" or \"user\", got \"a\\x0a");
}

TEST(CaptureValidation, TextLevelProblems)
{
    EXPECT_EQ(errorOfText(""), "empty input: expected a lockscope capture (JSON)");
    EXPECT_EQ(errorOfText("{} trailing"),
        "invalid JSON (parse error at line 1, column 6: syntax error while parsing value - invalid literal; "
        "last read: '{} tra'; expected end of input)");
    EXPECT_EQ(errorOfText("{\"a\": 1e999}"), "invalid JSON (number overflow parsing '1e999')");
    EXPECT_EQ(errorOfText("[[[[1]]]]", ReadLimits { 1 << 20, 3 }),
        "JSON nested deeper than 3 levels: not a lockscope capture (the format needs fewer than 10)");
    EXPECT_EQ(
        errorOfText("1234", ReadLimits { 3, 32 }), "input is 4 bytes, larger than the limit of 3 bytes");
    EXPECT_EQ(errorOfText("null"), "document: expected a lockscope capture (a JSON object), got null");
}

} // namespace
} // namespace lockscope
