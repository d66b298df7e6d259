// SPDX-License-Identifier: GPL-2.0-or-later
// The fast reader (simdjson) against the reference reader (nlohmann SAX):
// every capture in the tree, valid or malformed, gives the same Capture or
// the same one-line error through both, and the valid ones take the fast
// path instead of being handed to the reference reader.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "capture_reader.h"
#include "capture_text.h"
#include "capture_writer.h"
#include "fast_reader.h"
#include "json_pieces.h"
#include "lockscope/capture/io.h"
#include "sample_capture.h"
#include "zstd_text.h"

namespace lockscope {
namespace {

namespace fs = std::filesystem;

std::string slurp(const fs::path& p)
{
    std::ifstream in(p, std::ios::binary);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

// Every capture file under the fixture and sample directories.
std::vector<fs::path> captureFiles()
{
    const fs::path top = LOCKSCOPE_SOURCE_DIR;
    std::vector<fs::path> out;
    for (const char* dir : { "core/capture/tests/fixtures", "reports/tests/fixtures", "samples/captures" })
        for (const auto& e : fs::recursive_directory_iterator(top / dir))
            if (e.is_regular_file() && e.path().string().find(".json") != std::string::npos)
                out.push_back(e.path());
    return out;
}

struct Outcome {
    bool ok = false;
    Capture capture;
    std::string error;
};

template <class Read> Outcome outcome(Read read)
{
    Outcome o;
    try {
        o.capture = read();
        o.ok = true;
    } catch (const CaptureError& e) {
        o.error = e.what();
    }
    return o;
}

// The text writeCapture() writes (toJson().dump() sorts the members).
std::string written(const Capture& c, CaptureLayout layout = CaptureLayout::Full, bool pretty = false)
{
    return detail::serializeCapture(c, pretty, layout == CaptureLayout::Compact);
}

bool fastPathTakes(const std::string& text)
{
    std::string padded = text;
    padded.append(detail::fast::kPadding, ' ');
    return detail::fast::parse(padded.data(), text.size(), ReadLimits {}).has_value();
}

// Both readers on text: the same Capture, or the same message.
void expectSame(const std::string& text, const std::string& what)
{
    const Outcome fast = outcome([&] { return parseCapture(text); });
    const Outcome ref = outcome([&] { return parseCaptureReference(text); });
    ASSERT_EQ(fast.ok, ref.ok) << what << ": " << fast.error << ref.error;
    if (ref.ok)
        EXPECT_TRUE(fast.capture == ref.capture) << what;
    else
        EXPECT_EQ(fast.error, ref.error) << what;
}

TEST(FastReader, EveryCaptureInTheTreeReadsAsTheReferenceReadsIt)
{
    const auto files = captureFiles();
    ASSERT_GE(files.size(), 50u);
    int valid = 0;
    for (const auto& f : files) {
        const std::string text = slurp(f);
        expectSame(text, f.string());
        // The same through readCapture, the file path included in errors.
        const Outcome fast = outcome([&] { return readCapture(f.string()); });
        const Outcome ref = outcome([&] { return parseCaptureReference(text); });
        ASSERT_EQ(fast.ok, ref.ok) << f;
        if (ref.ok) {
            EXPECT_TRUE(fast.capture == ref.capture) << f;
            // A valid file in either layout takes the fast path (none is hand-ordered).
            EXPECT_TRUE(fastPathTakes(written(ref.capture))) << f;
            EXPECT_TRUE(fastPathTakes(written(ref.capture, CaptureLayout::Compact))) << f;
            ++valid;
        }
    }
    EXPECT_GE(valid, 19); // 3 capture fixtures, 12 reports fixtures, 4 samples
}

TEST(FastReader, ValidFixturesTakeTheFastPathAsWritten)
{
    const fs::path dir = LOCKSCOPE_CAPTURE_FIXTURES;
    for (const char* name : { "baseline", "patched", "owners" })
        EXPECT_TRUE(fastPathTakes(slurp(dir / (std::string(name) + ".lockscope.json")))) << name;
}

// cpu.bpf_samples is optional: written when counted (0 included), read by
// both readers in both layouts on the fast path; absent is not counted,
// which a reader keeps apart from 0.
TEST(FastReader, CpuSamplesRunningBpfReadBackInBothLayouts)
{
    Capture c = testing::makeSemopCapture(testing::SemopScenario::Baseline);
    c.cpu.bpf_samples.reset();
    EXPECT_EQ(written(c).find("bpf_samples"), std::string::npos);
    for (const std::optional<uint64_t> count : { std::optional<uint64_t>(), std::optional<uint64_t>(0),
                                                 std::optional<uint64_t>(1234) }) {
        c.cpu.bpf_samples = count;
        for (const auto layout : { CaptureLayout::Full, CaptureLayout::Compact }) {
            const std::string text = written(c, layout);
            EXPECT_EQ(text.find("\"bpf_samples\"") != std::string::npos, count.has_value());
            EXPECT_TRUE(fastPathTakes(text));
            expectSame(text, "bpf_samples");
            const Capture back = parseCapture(text);
            EXPECT_EQ(back.cpu.bpf_samples, count);
            EXPECT_TRUE(back == c);
        }
    }
}

// Files the writer would not write but the format allows: the fast path
// declines them and the reference reader reads them.
TEST(FastReader, UnusualButValidFilesReadTheSame)
{
    const Capture c = testing::makeSemopCapture(testing::SemopScenario::Baseline);
    const std::string text = written(c);
    auto variant = [&](const std::string& from, const std::string& to) {
        std::string t = text;
        const auto at = t.find(from);
        EXPECT_NE(at, std::string::npos) << from;
        t.replace(at, from.size(), to);
        return t;
    };
    const std::vector<std::string> texts {
        variant("{\"format\"", "{\"extra\":[[[1]]],\"format\""),          // an unknown member
        variant("\"label\":", "\"label\":\"first\",\"label\":"),          // a repeated member: the last counts
        variant("\"hostname\"", "\"host\\u006eame\""),                    // an escaped key
        variant("\"cpu_count\"", "\"syscall_timing_skipped\":null,\"cpu_count\""), // null = absent
        variant("\"cpu_count\":" + std::to_string(c.meta.cpu_count), "\"cpu_count\":-0"), // -0 reads as 0
        text + " \n\t",                                                   // trailing whitespace
        written(c, CaptureLayout::Compact, true),                         // pretty
        toJson(c).dump(),                                                 // members sorted: version last
    };
    for (size_t i = 0; i < texts.size(); ++i)
        expectSame(texts[i], "variant " + std::to_string(i));
    EXPECT_TRUE(fastPathTakes(texts[5]));
    EXPECT_TRUE(fastPathTakes(texts[6]));
}

// Every prefix of a small capture, and single-byte changes: rejected with the
// reference's message or read the same.
TEST(FastReader, TruncatedAndMutatedTextGivesTheReferenceOutcome)
{
    const Capture c = testing::makeSyntheticCapture(4, 3);
    for (const auto layout : { CaptureLayout::Full, CaptureLayout::Compact }) {
        const std::string text = written(c, layout);
        for (size_t n = 0; n < text.size(); n += 7)
            expectSame(text.substr(0, n), "prefix " + std::to_string(n));
        const char swaps[] = { '0', '9', '-', '"', '}', ']', ',', '.', 'e', ' ', '\\', 'x' };
        for (size_t i = 0; i < text.size(); i += 5) {
            std::string t = text;
            t[i] = swaps[i % std::size(swaps)];
            expectSame(t, "byte " + std::to_string(i));
        }
    }
}

// A capture of several MB is read in pieces (json_pieces.h): the stacks and
// locks a batch at a time. It reads as the reference reads it, and the text,
// which the pieces are bracketed in while they are read, is as it was after,
// read or declined mid-piece.
TEST(FastReader, ABigCaptureReadInPiecesIsTheReferencesAndTheTextIsLeftAsItWas)
{
    const Capture c = testing::makeSyntheticCapture(6000, 600);
    for (const auto layout : { CaptureLayout::Full, CaptureLayout::Compact }) {
        const std::string text = written(c, layout);
        ASSERT_GT(text.size(), 2 * detail::fast::kPieceBytes);
        expectSame(text, "whole");
        std::string padded = text + std::string(detail::fast::kPadding, ' ');
        const std::string before = padded;
        const auto fast = detail::fast::parse(padded.data(), text.size(), ReadLimits {});
        ASSERT_TRUE(fast.has_value()) << "declined";
        EXPECT_TRUE(*fast == c);
        EXPECT_TRUE(padded == before) << "text changed by a read";
        // Broken past the first pieces of the stacks, then of the locks.
        for (const char* what : { "\"stacks\"", "\"locks\"" }) {
            const size_t at = text.find(what);
            ASSERT_NE(at, std::string::npos);
            const size_t broken = text.find("},{", at + detail::fast::kPieceBytes + 1000) + 1;
            ASSERT_LT(broken, text.size()) << what;
            std::string t = text;
            t[broken] = '}'; // "}}{": not JSON
            expectSame(t, std::string("a brace in ") + what);
            expectSame(text.substr(0, broken), std::string("cut in ") + what);
            std::string p = t + std::string(detail::fast::kPadding, ' ');
            const std::string pb = p;
            EXPECT_FALSE(detail::fast::parse(p.data(), t.size(), ReadLimits {}).has_value());
            EXPECT_TRUE(p == pb) << "text changed by a declined read";
        }
    }
}

detail::CaptureText textOf(std::string_view s)
{
    detail::CaptureText t;
    t.append(s);
    return t;
}

// The pages of text before each piece read are given back (capture_text.h).
// A file the fast reader declines after that is read again from its source
// for the reference reader, which then reads it or words its error; a file
// read through is read once.
TEST(FastReader, TextGivenBackIsReadAgainWhenTheFastReaderDeclinesLate)
{
    const Capture c = testing::makeSyntheticCapture(6000, 600);
    const std::string text = written(c);
    auto variant = [&](const std::string& from, const std::string& to) {
        std::string t = text;
        const auto at = t.rfind(from); // after the stacks and the locks
        EXPECT_GT(at, text.find("\"locks\"")) << from;
        t.replace(at, from.size(), to);
        return t;
    };
    const std::string escapedKey = variant("\"syscalls\"", "\"sys\\u0063alls\""); // declined, valid
    const std::string wrongValue = variant("\"workload\":{", "\"workload\":7,\"x\":{"); // declined, invalid
    for (const std::string* t : { &text, &escapedKey, &wrongValue }) {
        int reloads = 0;
        auto reload = [&] {
            ++reloads;
            return textOf(*t);
        };
        const Outcome got
            = outcome([&] { return detail::parseCaptureText(textOf(*t), reload, ReadLimits {}); });
        const Outcome ref = outcome([&] { return parseCaptureReference(*t); });
        ASSERT_EQ(got.ok, ref.ok) << got.error << ref.error;
        if (ref.ok)
            EXPECT_TRUE(got.capture == ref.capture);
        else
            EXPECT_EQ(got.error, ref.error);
        EXPECT_EQ(reloads, t == &text ? 0 : 1) << (t == &text ? "read through" : "declined late");
    }
    EXPECT_FALSE(outcome([&] { return parseCaptureReference(wrongValue); }).ok);
    EXPECT_TRUE(outcome([&] { return parseCaptureReference(escapedKey); }).capture == c);

    // The same through files: readCapture reads the file again.
    const fs::path dir = fs::temp_directory_path() / ("lockscope-late-" + std::to_string(getpid()));
    fs::create_directories(dir);
    for (const std::string* t : { &escapedKey, &wrongValue }) {
        const fs::path f = dir / "late.lockscope.json";
        std::ofstream(f, std::ios::binary) << *t;
        const Outcome got = outcome([&] { return readCapture(f.string()); });
        const Outcome ref = outcome([&] { return parseCaptureReference(*t); });
        ASSERT_EQ(got.ok, ref.ok) << got.error;
        if (ref.ok)
            EXPECT_TRUE(got.capture == c);
        else
            EXPECT_EQ(got.error, f.string() + ": " + ref.error);
    }
    fs::remove_all(dir);
}

// A text read as the reader gets to it (CaptureText::readFrom), in reads of
// every size from one byte up, cut anywhere: whatever the edges of the
// reads, the same capture or the reference reader's outcome.
TEST(FastReader, TextReadAsTheReaderGetsThereReadsTheSameWhereverTheReadsEnd)
{
    const Capture c = testing::makeSyntheticCapture(1000, 100);
    std::mt19937 rng(7);
    for (const auto layout : { CaptureLayout::Full, CaptureLayout::Compact }) {
        const std::string text = written(c, layout);
        for (const size_t most : { size_t { 1 }, size_t { 7 }, size_t { 4096 }, size_t { 100'000 } }) {
            for (const size_t cut : { text.size(), text.size() / 2, text.size() - 2 }) {
                const std::string_view t(text.data(), cut);
                auto lazily = [&] {
                    detail::CaptureText out;
                    out.reserve(t.size());
                    out.readFrom(
                        [&, at = size_t { 0 }](char* into, size_t room) mutable {
                            const size_t n = std::min(room, size_t { 1 } + rng() % most);
                            std::memcpy(into, t.data() + at, n);
                            at += n;
                            return n;
                        },
                        t.size());
                    return out;
                };
                const Outcome got
                    = outcome([&] { return detail::parseCaptureText(lazily(), lazily, ReadLimits {}); });
                const Outcome ref = outcome([&] { return parseCaptureReference(t); });
                const std::string what
                    = std::to_string(most) + " bytes a read, cut at " + std::to_string(cut);
                ASSERT_EQ(got.ok, ref.ok) << what << ": " << got.error << ref.error;
                if (ref.ok)
                    EXPECT_TRUE(got.capture == c) << what;
                else
                    EXPECT_EQ(got.error, ref.error) << what;
            }
        }
    }
}

// A compressed capture the fast reader declines after giving text back is
// read again, zstd frames and all, and read by the reference reader.
TEST(FastReader, ACompressedTextGivenBackIsReadAgainWhenDeclinedLate)
{
    const Capture c = testing::makeSyntheticCapture(6000, 600);
    std::string text = written(c);
    ASSERT_GT(text.size(), detail::kKeptBytes); // big enough to be given back
    const auto at = text.rfind("\"syscalls\"");
    text.replace(at, 10, "\"sys\\u0063alls\""); // valid, declined by the fast reader
    std::string frames;
    detail::ZstdWriter z([&](std::string_view p) { frames.append(p); });
    z.write(text);
    z.finish();
    int reloads = 0;
    auto reload = [&] {
        ++reloads;
        return textOf(frames);
    };
    const Outcome got
        = outcome([&] { return detail::parseCaptureText(textOf(frames), reload, ReadLimits {}); });
    ASSERT_TRUE(got.ok) << got.error;
    EXPECT_TRUE(got.capture == c);
    EXPECT_EQ(reloads, 1);
}

// A version 1 file (twice the size of its model) is read as the reader gets
// to it and given back behind it: a load's peak stays well under the text,
// where reading the text whole first peaked above it.
TEST(FastReader, AFileIsNeverWholeInMemory)
{
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
    GTEST_SKIP() << "skipped: the sanitizers' allocators do not give memory back as glibc's does";
#endif
    const Capture c = testing::makeSyntheticCapture(25000, 2500);
    const std::string text = written(c);
    const fs::path f = fs::temp_directory_path() / ("lockscope-lazy-" + std::to_string(getpid()) + ".json");
    std::ofstream(f, std::ios::binary) << text;
    const pid_t child = fork();
    ASSERT_GE(child, 0);
    if (child == 0) {
        // Peak RSS over the load, in KB: VmHWM reset to the RSS now (clear_refs 5).
        auto status = [](const char* field) {
            std::ifstream in("/proc/self/status");
            std::string line;
            while (std::getline(in, line))
                if (line.rfind(field, 0) == 0)
                    return std::stol(line.substr(std::strlen(field)));
            return -1L;
        };
        if (!(std::ofstream("/proc/self/clear_refs") << "5"))
            _exit(3);
        const long before = status("VmRSS:");
        const Capture read = readCapture(f.string());
        const long peak = status("VmHWM:") - before;
        const long textKb = static_cast<long>(text.size() / 1024);
        (void)std::printf("text %ld KB, peak over the start %ld KB\n", textKb, peak);
        (void)std::fflush(stdout);
        _exit(!(read == c) ? 1 : peak < textKb * 3 / 4 ? 0 : 2);
    }
    int st = 0;
    ASSERT_EQ(waitpid(child, &st, 0), child);
    fs::remove(f);
    ASSERT_TRUE(WIFEXITED(st));
    EXPECT_EQ(WEXITSTATUS(st), 0)
        << "1: not the capture, 2: peak of 3/4 of the text or more, 3: no clear_refs";
}

TEST(FastReader, LimitsAreTheReferenceReadersLimits)
{
    const std::string text = written(testing::makeSemopCapture(testing::SemopScenario::Patched));
    for (unsigned depth : { 1U, 5U, 7U, 8U, 9U, 32U }) {
        const ReadLimits limits { .max_file_bytes = 1ULL << 30, .max_depth = depth };
        const Outcome fast = outcome([&] { return parseCapture(text, limits); });
        const Outcome ref = outcome([&] { return parseCaptureReference(text, limits); });
        ASSERT_EQ(fast.ok, ref.ok) << depth;
        EXPECT_EQ(fast.error, ref.error) << depth;
    }
    const ReadLimits small { .max_file_bytes = text.size() - 1 };
    EXPECT_EQ(outcome([&] { return parseCapture(text, small); }).error,
        outcome([&] { return parseCaptureReference(text, small); }).error);
}

// The reader sizes its arrays from their element counts before reading any
// element: an array of millions of empty elements must not reserve a
// Lock (~1.8 KB) for each. Under a 1-GB address-space limit the read fails
// with its error, not with bad_alloc.
TEST(FastReader, AnArrayOfEmptyElementsReservesLittle)
{
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
    GTEST_SKIP() << "skipped: the sanitizer's shadow memory does not fit an address-space limit";
#endif
    std::string text = R"({"format":"lockscope-capture","version":2,"symbols":[],"stacks":[],"locks":[)";
    constexpr size_t kEmpty = 2'000'000; // 4 GB of locks reserved by count
    text.reserve(text.size() + kEmpty * 3 + 2);
    for (size_t i = 0; i < kEmpty; ++i)
        text += i ? ",{}" : "{}";
    text += "]}";
    const pid_t child = fork();
    ASSERT_GE(child, 0);
    if (child == 0) {
        rlimit as {};
        getrlimit(RLIMIT_AS, &as);
        as.rlim_cur = rlim_t { 1 } << 30;
        setrlimit(RLIMIT_AS, &as);
        try {
            parseCapture(text);
        } catch (const CaptureError&) {
            _exit(0);
        } catch (const std::bad_alloc&) {
            _exit(2);
        }
        _exit(1);
    }
    int status = 0;
    ASSERT_EQ(waitpid(child, &status, 0), child);
    ASSERT_TRUE(WIFEXITED(status));
    EXPECT_EQ(WEXITSTATUS(status), 0) << "1: read as valid, 2: bad_alloc";
}

} // namespace
} // namespace lockscope
