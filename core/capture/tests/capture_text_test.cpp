// SPDX-License-Identifier: GPL-2.0-or-later
// CaptureText (src/capture_text.h): text that grows in place, is padded for
// simdjson, and gives its pages back as the reader passes them.
#include <gtest/gtest.h>

#include <sys/mman.h>
#include <unistd.h>

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

TEST(CaptureText, GrowsKeepingItsBytesAndPadsWithSpaces)
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
    const char* p = t.padded();
    EXPECT_EQ(std::string(p + t.size(), kTextPadding), std::string(kTextPadding, ' '));
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
            EXPECT_EQ(std::string(next.padded(), next.size() + kTextPadding), "{}" + std::string(kTextPadding, ' '));
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
