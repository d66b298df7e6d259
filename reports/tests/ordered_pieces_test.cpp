// SPDX-License-Identifier: GPL-2.0-or-later
// makeInOrder: pieces made on several threads come to `take` in order, a
// few at a time, and a failure anywhere comes back to the caller.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <set>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "ordered_pieces.h"

using lockscope::reports::detail::makeInOrder;

TEST(OrderedPieces, EveryPieceComesOnceInOrder)
{
    std::vector<std::string> got;
    makeInOrder(
        5000, [](size_t i, std::string& text) { text += std::to_string(i) + ';'; },
        [&](const std::string& text) { got.push_back(text); });
    ASSERT_EQ(got.size(), 5000u);
    for (size_t i = 0; i < got.size(); ++i)
        ASSERT_EQ(got[i], std::to_string(i) + ';') << i;

    size_t takes = 0;
    makeInOrder(0, [](size_t, std::string&) { FAIL() << "nothing to make"; }, [&](const std::string&) { ++takes; });
    EXPECT_EQ(takes, 0u);
    makeInOrder(1, [](size_t, std::string& text) { text = "one"; }, [&](const std::string& t) { takes += t == "one"; });
    EXPECT_EQ(takes, 1u);
}

// Whoever makes piece 0 waits until another thread made piece 1: with one
// thread making pieces this fails (after 20 s) instead of passing.
TEST(OrderedPieces, PiecesAreMadeOnTwoThreadsAtOnce)
{
    std::mutex m;
    std::condition_variable cv;
    std::thread::id maker0, maker1;
    bool madeOne = false;
    makeInOrder(
        2,
        [&](size_t i, std::string& text) {
            std::unique_lock lock(m);
            if (i == 0) {
                maker0 = std::this_thread::get_id();
                EXPECT_TRUE(cv.wait_for(lock, std::chrono::seconds(20), [&] { return madeOne; }))
                    << "piece 1 was not made while piece 0 was";
            } else {
                maker1 = std::this_thread::get_id();
                madeOne = true;
                cv.notify_all();
            }
            text = std::to_string(i);
        },
        [](const std::string&) {});
    EXPECT_NE(maker0, maker1);
}

TEST(OrderedPieces, OnlyAFewPiecesWaitToBeTaken)
{
    std::atomic<size_t> made{0}, taken{0}, most{0};
    makeInOrder(
        2000,
        [&](size_t, std::string& text) {
            const size_t ahead = ++made - taken;
            size_t seen = most;
            while (ahead > seen && !most.compare_exchange_weak(seen, ahead)) {
            }
            text = "x";
        },
        [&](const std::string&) {
            ++taken;
            std::this_thread::sleep_for(std::chrono::microseconds(20)); // a slow disk
        });
    EXPECT_EQ(taken, 2000u);
    EXPECT_LE(most, 8u) << "pieces made ahead of a slow take";
}

TEST(OrderedPieces, AFailureWhileMakingOrTakingComesBack)
{
    const auto failAt = [](size_t bad) {
        return [bad](size_t i, std::string& text) {
            if (i == bad)
                throw std::runtime_error("piece " + std::to_string(i));
            text = "ok";
        };
    };
    for (const size_t bad : {size_t{0}, size_t{1}, size_t{777}}) {
        size_t takes = 0;
        try {
            makeInOrder(2000, failAt(bad), [&](const std::string&) { ++takes; });
            ADD_FAILURE() << "no error for piece " << bad;
        } catch (const std::runtime_error& e) {
            EXPECT_EQ(std::string(e.what()), "piece " + std::to_string(bad));
        }
        EXPECT_LE(takes, bad) << "a piece after the failed one was taken";
    }
    size_t takes = 0;
    EXPECT_THROW(makeInOrder(
                     2000, [](size_t, std::string& text) { text = "ok"; },
                     [&](const std::string&) {
                         if (++takes == 100)
                             throw std::runtime_error("disk full");
                     }),
                 std::runtime_error);
    EXPECT_EQ(takes, 100u);
}
