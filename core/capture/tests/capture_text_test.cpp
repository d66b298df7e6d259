// SPDX-License-Identifier: GPL-2.0-or-later
// CaptureText (src/capture_text.h): text that grows in place, or is read
// from its source as the reader asks, has room for simdjson's padding, and
// gives its pages back as the reader passes them.
#include <gtest/gtest.h>

#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "capture_text.h"

namespace lockscope::detail {
namespace {

// How many of the pages of [p, p + n) are in memory.
size_t residentPages(char* p, size_t n)
{
    const auto page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
    std::vector<unsigned char> in((n + page - 1) / page);
    EXPECT_EQ(mincore(p, n, in.data()), 0);
    size_t count = 0;
    for (const unsigned char b : in)
        count += b & 1U;
    return count;
}

TEST(CaptureText, GrowsKeepingItsBytesAndRoomForThePadding)
{
    CaptureText t;
    EXPECT_EQ(t.spareBytes(), 0U); // nothing mapped yet
    std::string want;
    for (int i = 0; i < 20000; ++i) {
        const std::string piece = std::to_string(i) + ",";
        t.append(piece);
        want += piece;
    }
    ASSERT_EQ(t.view(), want);
    EXPECT_GE(t.readable(), t.size() + kTextPadding);
    CaptureText moved = std::move(t);
    EXPECT_EQ(moved.view(), want);
    EXPECT_EQ(t.size(), 0U); // NOLINT(bugprone-use-after-move): moved-from is empty
}

TEST(CaptureText, ReleaseGivesBackTheWholePagesBeforeThePointOnly)
{
    const auto page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
    const size_t pages = kKeptBytes / page + 64; // a big text: small ones are kept whole
    CaptureText t;
    t.append(std::string(pages * page, 'x'));
    ASSERT_EQ(residentPages(t.data(), t.size()), pages);
    EXPECT_FALSE(t.released());
    t.release(t.data() + 10 * page + page / 2); // 10 whole pages before it
    EXPECT_TRUE(t.released());
    EXPECT_EQ(residentPages(t.data(), t.size()), pages - 10);
    t.release(t.data() + 5 * page); // behind what is given back already: nothing
    t.release(t.data() + 20 * page);
    EXPECT_EQ(residentPages(t.data(), t.size()), pages - 20);
    EXPECT_EQ(t.view().substr(20 * page), std::string((pages - 20) * page, 'x'));
    EXPECT_EQ(t.data()[20 * page - 1], '\0'); // given back: reads as zero
}

// A text read from its source: kLoadBytes at a time by default, in the
// room reserved, never moved, and nothing past the bytes it was told of
// even when the source has more (a file grown since it was sized).
TEST(CaptureText, ReadsFromItsSourceAsAskedInTheRoomReserved)
{
    std::string file(3 * kLoadBytes + 100, 'x');
    for (size_t i = 0; i < file.size(); i += 997)
        file[i] = static_cast<char>('a' + i % 26);
    const size_t room = file.size() - 50; // the file grew by 50 bytes
    CaptureText t;
    t.reserve(room);
    size_t at = 0;
    t.readFrom(
        [&](char* into, size_t n) {
            n = std::min(n, file.size() - at);
            std::memcpy(into, file.data() + at, n);
            at += n;
            return n;
        },
        room);
    const char* const base = t.data();
    EXPECT_TRUE(t.readsOn());
    ASSERT_TRUE(t.more());
    EXPECT_EQ(t.size(), kLoadBytes);
    ASSERT_TRUE(t.more(10));
    EXPECT_EQ(t.view(), std::string_view(file).substr(0, kLoadBytes + 10));
    t.readAll();
    EXPECT_EQ(t.data(), base);
    EXPECT_EQ(t.view(), std::string_view(file).substr(0, room));
    EXPECT_FALSE(t.readsOn());
    EXPECT_FALSE(t.more());

    // Read whole by its first read: it does not read on.
    CaptureText small;
    small.reserve(10);
    small.readFrom(
        [&](char* into, size_t n) {
            std::memcpy(into, file.data(), n);
            return n;
        },
        10);
    EXPECT_TRUE(small.readsOn());
    EXPECT_TRUE(small.more());
    EXPECT_EQ(small.view(), std::string_view(file).substr(0, 10));
    EXPECT_FALSE(small.readsOn());
}

// Each body runs on a thread of its own: what earlier tests left kept on
// the test's thread does not count.
void onFreshThread(const std::function<void()>& body) { std::thread(body).join(); }

TEST(CaptureText, ASmallTextIsKeptWholeForTheThreadsNextText)
{
    onFreshThread([] {
        const auto page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
        const char* first = nullptr;
        {
            CaptureText t;
            t.append(std::string(64 * page, 'x'));
            t.release(t.data() + 20 * page);
            EXPECT_FALSE(t.released()) << "a small text is not given back in pieces";
            EXPECT_EQ(residentPages(t.data(), t.size()), 64U);
            first = t.data();
        }
        {
            CaptureText next;
            next.reserve(32 * page); // fits in the kept mapping
            ASSERT_EQ(next.data(), first) << "the thread's next text reuses the mapping";
            EXPECT_EQ(residentPages(next.data(), 64 * page), 64U) << "its pages are in memory already";
            next.append("{}");
            EXPECT_EQ(next.view(), "{}");
        } // kept again, for this thread only
        const char* other = nullptr;
        onFreshThread([&] {
            CaptureText t;
            t.reserve(32 * page);
            other = t.data();
        });
        EXPECT_NE(other, nullptr);
        EXPECT_NE(other, first) << "another thread maps its own";
        CaptureText again;
        again.reserve(page);
        EXPECT_EQ(again.data(), first);
    });
}

// A compressed file's bytes and the text they decompress to: both kept,
// and each of the next pair gets the one that fits it best.
TEST(CaptureText, ACompressedFilesTwoTextsAreBothKept)
{
    onFreshThread([] {
        const auto page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
        const char *small = nullptr, *big = nullptr;
        {
            CaptureText bytes, text;
            bytes.reserve(8 * page);
            text.reserve(128 * page);
            small = bytes.data();
            big = text.data();
        }
        CaptureText bytes, text;
        bytes.reserve(4 * page);
        text.reserve(100 * page);
        EXPECT_EQ(bytes.data(), small) << "the smallest kept mapping that fits";
        EXPECT_EQ(text.data(), big);
    });
}

} // namespace
} // namespace lockscope::detail
