// SPDX-License-Identifier: GPL-2.0-or-later
// The compact layout (format version 2) and zstd-compressed captures: every
// figure survives old -> new -> old, and bad compact or compressed input
// gets one line naming the problem.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <unistd.h>

#include "lockscope/capture/io.h"
#include "sample_capture.h"

namespace lockscope {
namespace {

namespace fs = std::filesystem;

const WriteOptions kCompact { .pretty = false, .layout = CaptureLayout::Compact };

std::string slurp(const std::string& p)
{
    std::ifstream in(p, std::ios::binary);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

std::string errorOf(std::string_view text, const ReadLimits& limits = {})
{
    try {
        parseCapture(text, limits);
    } catch (const CaptureError& e) {
        const std::string what = e.what();
        EXPECT_EQ(what.find('\n'), std::string::npos);
        return what;
    }
    return "(accepted)";
}

std::string docError(const nlohmann::json& doc) { return errorOf(doc.dump()); }

class CompactFiles : public ::testing::Test {
protected:
    void SetUp() override
    {
        std::string tmpl = (fs::temp_directory_path() / "lockscope-compact-XXXXXX").string();
        ASSERT_NE(::mkdtemp(tmpl.data()), nullptr);
        dir_ = tmpl;
    }
    void TearDown() override { fs::remove_all(dir_); }
    std::string path(const std::string& name) const { return (dir_ / name).string(); }

    fs::path dir_;
};

Capture semop() { return testing::makeSemopCapture(testing::SemopScenario::Baseline); }

TEST(CompactLayout, RoundTripsEveryCaptureExactly)
{
    for (const Capture& c : { semop(), testing::makeSemopCapture(testing::SemopScenario::Patched),
             testing::makeSyntheticCapture(300, 40) }) {
        EXPECT_EQ(fromJson(toJson(c, CaptureLayout::Compact)), c);
        EXPECT_EQ(parseCapture(toJson(c, CaptureLayout::Compact).dump()), c);
    }
}

TEST(CompactLayout, WritesVersion2WithSymbolsNamedOnce)
{
    const auto j = toJson(semop(), CaptureLayout::Compact);
    EXPECT_EQ(j.at("version"), kCaptureVersionCompact);
    std::set<std::string> seen;
    for (const auto& s : j.at("symbols"))
        EXPECT_TRUE(seen.insert(s.dump()).second) << s.dump();
    const auto& frames = j.at("stacks")[0].at("frames");
    ASSERT_EQ(frames.size() % 2, 0u);
    EXPECT_TRUE(frames[0].is_number_unsigned());
    // Sparse: only non-empty buckets, as [bucket, count] pairs.
    const auto& hist = j.at("locks")[0].at("wait").at("buckets");
    EXPECT_LT(hist.size(), 64u);
    EXPECT_EQ(hist.size() % 2, 0u);
}

TEST(CompactLayout, OldToNewToOldKeepsTheFixturesText)
{
    for (const char* name : { "baseline", "patched", "owners" }) {
        const std::string file = std::string(LOCKSCOPE_CAPTURE_FIXTURES) + "/" + name + ".lockscope.json";
        const Capture old = readCapture(file);
        const Capture back = parseCapture(toJson(old, CaptureLayout::Compact).dump());
        EXPECT_EQ(back, old) << name;
        EXPECT_EQ(toJson(back), toJson(old)) << name;
    }
}

TEST(CompactLayout, UnwalkedAndRedactedFramesKeepTheirAddresses)
{
    Capture c = semop();
    c.stacks[0].frames[0].address.reset();                            // redacted
    c.stacks[0].frames[1] = Frame { "", 0, "", 0xffffffff81234567ull }; // unresolved
    c.stacks[1].frames[0] = Frame { "main", 0x40, "/usr/bin/app", 0x55550000ull + 0x40 };
    c.stacks[1].frames[1] = Frame { "main", 0x40, "/usr/bin/app", 0x7f0000ull + 0x40 }; // another load address
    EXPECT_EQ(parseCapture(toJson(c, CaptureLayout::Compact).dump()), c);
}

TEST(CompactLayout, SymbolsAfterStacksStillRead)
{
    // Hand-written order: the reader keeps the DOM and converts at the end.
    const Capture c = semop();
    auto j = toJson(c, CaptureLayout::Compact); // nlohmann::json sorts keys: "stacks" < "symbols"
    EXPECT_EQ(parseCapture(j.dump()), c);
}

TEST(CompactLayout, RefusesBadFramesAndHistograms)
{
    const auto doc = toJson(semop(), CaptureLayout::Compact);
    auto j = doc;
    j["stacks"][0]["frames"][0] = 100000;
    EXPECT_EQ(docError(j), "stacks[0].frames[0]: no symbol 100000 in symbols ("
            + std::to_string(doc["symbols"].size()) + " entries)");
    j = doc;
    j["stacks"][0]["frames"].push_back(1);
    EXPECT_EQ(docError(j), "stacks[0].frames: expected [symbol, offset] pairs, got "
            + std::to_string(j["stacks"][0]["frames"].size()) + " integers");
    j = doc;
    j["locks"][0]["wait"]["buckets"].push_back(3);
    EXPECT_NE(docError(j).find("locks[0].wait.buckets: expected [bucket, count] pairs, got"), std::string::npos);
    j = doc;
    j["locks"][0]["wait"]["buckets"] = { 64, 1 };
    EXPECT_EQ(docError(j), "locks[0].wait.buckets[0]: out of range: 64 > 63");
    j = doc;
    auto& h = j["locks"][0]["wait"]["buckets"];
    ASSERT_GE(h.size(), 4u) << "the baseline's first lock spreads over several buckets";
    std::swap(h[0], h[2]);
    std::swap(h[1], h[3]);
    EXPECT_NE(docError(j).find("locks[0].wait.buckets[2]: bucket "), std::string::npos) << docError(j);
    j = doc;
    j["locks"][0]["wait"]["buckets"][1] = 0;
    EXPECT_NE(docError(j).find("listed with count 0"), std::string::npos) << docError(j);
    j = doc;
    j["locks"][0]["wait"]["count"] = j["locks"][0]["wait"]["count"].get<uint64_t>() + 1;
    EXPECT_NE(docError(j).find("locks[0].wait: inconsistent histogram: bucket counts sum to"), std::string::npos);
    j = doc;
    j["symbols"][0]["address"] = 5;
    EXPECT_NE(docError(j).find("symbols[0].address: expected a hex address string"), std::string::npos);
    j = doc;
    j.erase("symbols");
    EXPECT_EQ(docError(j), "symbols: missing (required field)");
}

TEST(CompactLayout, VersionsOutsideTheKnownOnesAreRefused)
{
    auto j = toJson(semop(), CaptureLayout::Compact);
    j["version"] = 3;
    EXPECT_EQ(docError(j), "format version 3 is newer than this lockscope reads (2): upgrade lockscope");
    j["version"] = 0;
    EXPECT_EQ(docError(j), "version: format version 0 is not valid (this lockscope reads 1 to 2)");
    const std::string text = toJson(semop(), CaptureLayout::Compact).dump();
    EXPECT_EQ(errorOf("{\"format\":\"lockscope-capture\",\"version\":2,\"version\":1" + text.substr(1)),
        "version: appears twice in the document");
}

TEST(CompactLayout, LimitsHold)
{
    ReadLimits tight;
    tight.max_depth = 4;
    const std::string text = toJson(semop(), CaptureLayout::Compact).dump();
    EXPECT_EQ(errorOf(text, tight),
        "JSON nested deeper than 4 levels: not a lockscope capture (the format needs fewer than 10)");
    ReadLimits small;
    small.max_file_bytes = 1000;
    EXPECT_EQ(errorOf(text, small),
        "input is " + std::to_string(text.size()) + " bytes, larger than the limit of 1000 bytes");
}

TEST_F(CompactFiles, ZstdByNameBothLayoutsReadBack)
{
    const Capture c = testing::makeSyntheticCapture(500, 60);
    const std::string full = path("a.lockscope.json.zst");
    const std::string compact = path("b.lockscope.json.zst");
    const std::string plain = path("c.lockscope.json");
    writeCapture(c, full);
    writeCapture(c, compact, kCompact);
    writeCapture(c, plain, kCompact);
    for (const auto& p : { full, compact }) {
        const std::string bytes = slurp(p);
        ASSERT_GE(bytes.size(), 4u);
        EXPECT_EQ(static_cast<unsigned char>(bytes[0]), 0x28u) << "zstd magic";
        EXPECT_EQ(readCapture(p), c);
    }
    EXPECT_EQ(slurp(plain).front(), '{');
    EXPECT_EQ(readCapture(plain), c);
    EXPECT_LT(fs::file_size(compact) * 3, fs::file_size(plain));
}

// The writer hands its text on as it makes it (files, the agent's /capture):
// pieces of about a MiB, plain or zstd, that add up to what a file holds.
TEST_F(CompactFiles, TextIsHandedOnInPiecesNeverWhole)
{
    const Capture c = testing::makeSyntheticCapture(8000, 800);
    for (const bool zstd : { false, true }) {
        for (const WriteOptions& o : { WriteOptions {}, kCompact }) {
            std::vector<size_t> sizes;
            std::string joined;
            writeCapture(c, o, zstd, [&](std::string_view piece) {
                sizes.push_back(piece.size());
                joined += piece;
            });
            const std::string p = path(zstd ? "p.lockscope.json.zst" : "p.lockscope.json");
            writeCapture(c, p, o);
            EXPECT_EQ(joined, slurp(p)) << "zstd " << zstd;
            EXPECT_EQ(parseCapture(joined), c);
            EXPECT_GE(sizes.size(), 3u) << joined.size() << " bytes in one piece";
            EXPECT_LE(*std::max_element(sizes.begin(), sizes.end()), size_t { 1100 } << 10);
        }
    }
    struct Full { };
    EXPECT_THROW(writeCapture(c, WriteOptions {}, false, [](std::string_view) { throw Full {}; }), Full)
        << "what the sink throws reaches the caller";
}

TEST_F(CompactFiles, CorruptTruncatedAndHostileZstdGetOneLine)
{
    const std::string p = path("a.lockscope.json.zst");
    writeCapture(testing::makeSyntheticCapture(200, 30), p, kCompact);
    const std::string good = slurp(p);

    const std::string truncated = good.substr(0, good.size() / 2);
    EXPECT_EQ(errorOf(truncated), "truncated zstd data: the file ends inside a compressed frame");

    std::string corrupt = good;
    for (size_t i = good.size() / 3; i < good.size() / 3 + 16; ++i)
        corrupt[i] = static_cast<char>(corrupt[i] ^ 0x5a);
    EXPECT_EQ(errorOf(corrupt).rfind("corrupt zstd data: ", 0), 0u) << errorOf(corrupt);

    // Only the magic number: the frame header is cut short.
    EXPECT_EQ(errorOf(good.substr(0, 4)), "truncated zstd data: the file ends inside a compressed frame");
}

// A zstd frame made by hand (RFC 8878): magic, a header without content
// size and a 128 KiB window, then the given blocks.
std::string zstdFrame(const std::string& blocks)
{
    return std::string("\x28\xb5\x2f\xfd\x00\x38", 6) + blocks;
}

// One block header (3 bytes, little endian): last flag, type, size.
std::string blockHeader(uint32_t size, unsigned type, bool last)
{
    const uint32_t h = (size << 3) | (type << 1) | (last ? 1u : 0u);
    return { static_cast<char>(h & 0xff), static_cast<char>((h >> 8) & 0xff), static_cast<char>(h >> 16) };
}

TEST(CompressedInput, ABombIsRefusedAsItGrows)
{
    // 16 RLE blocks of 128 KiB spaces: 70 bytes that inflate to 2 MiB.
    std::string blocks;
    for (int i = 0; i < 16; ++i)
        blocks += blockHeader(128 * 1024, 1, i == 15) + " ";
    ReadLimits limits;
    limits.max_file_bytes = 1 << 20;
    EXPECT_EQ(errorOf(zstdFrame(blocks), limits), "decompresses to more than the limit of 1048576 bytes");
    EXPECT_EQ(errorOf(zstdFrame(blocks)), "empty input: expected a lockscope capture (JSON)");
}

TEST(CompressedInput, WhatIsInsideIsCheckedLikeText)
{
    const std::string notJson = "[1, 2, 3]\n";
    EXPECT_EQ(errorOf(zstdFrame(blockHeader(static_cast<uint32_t>(notJson.size()), 0, true) + notJson)),
        "document: expected a lockscope capture (a JSON object), got an array");
    // A capture compressed by hand, in any layout, reads like the plain one.
    const std::string text = toJson(semop(), CaptureLayout::Compact).dump();
    std::string blocks;
    for (size_t at = 0; at < text.size(); at += 100000) {
        const std::string part = text.substr(at, 100000);
        blocks += blockHeader(static_cast<uint32_t>(part.size()), 0, at + 100000 >= text.size()) + part;
    }
    EXPECT_EQ(parseCapture(zstdFrame(blocks)), semop());
    // A reserved block type.
    EXPECT_EQ(errorOf(zstdFrame(blockHeader(4, 3, true) + "abcd")).rfind("corrupt zstd data: ", 0), 0u);
}

// A skippable frame (RFC 8878): magic 0x184D2A5?, size, content.
std::string skippableFrame(const std::string& content, char nibble = '\x50')
{
    const auto n = static_cast<uint32_t>(content.size());
    return std::string { nibble, '\x2a', '\x4d', '\x18' }
        + std::string { static_cast<char>(n & 0xff), static_cast<char>((n >> 8) & 0xff),
                        static_cast<char>((n >> 16) & 0xff), static_cast<char>(n >> 24) }
        + content;
}

// pzstd (Debian's zstd package) writes a skippable frame ahead of each of
// its frames; they were taken for JSON ("invalid literal; last read: 'P'").
TEST(CompressedInput, SkippableFramesAndSeveralFramesReadAsPzstdWritesThem)
{
    const std::string text = toJson(semop(), CaptureLayout::Compact).dump();
    const size_t half = text.size() / 2;
    const auto frame = [](const std::string& part) {
        return zstdFrame(blockHeader(static_cast<uint32_t>(part.size()), 0, true) + part);
    };
    const std::string pzstdLike = skippableFrame("size") + frame(text.substr(0, half))
        + skippableFrame("size", '\x5f') + frame(text.substr(half));
    EXPECT_EQ(parseCapture(pzstdLike), semop());
    EXPECT_EQ(parseCaptureReference(pzstdLike), semop());
    EXPECT_EQ(errorOf(skippableFrame("")), "empty input: expected a lockscope capture (JSON)");
    EXPECT_EQ(errorOf(skippableFrame("size").substr(0, 6)),
        "truncated zstd data: the file ends inside a compressed frame");
    // 0x184D2A60 is no magic number: such a file is not taken for zstd.
    EXPECT_EQ(errorOf(skippableFrame("size", '\x60')).rfind("invalid JSON", 0), 0u);
}

} // namespace
} // namespace lockscope
