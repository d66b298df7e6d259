// SPDX-License-Identifier: GPL-2.0-or-later
#include "ordered_pieces.h"

#include <algorithm>
#include <condition_variable>
#include <exception>
#include <mutex>
#include <thread>
#include <vector>

namespace lockscope::reports::detail {
namespace {

size_t helperThreads()
{
    const unsigned cpus = std::thread::hardware_concurrency();
    return std::clamp<size_t>(cpus > 1 ? cpus - 1 : 1, 1, 3);
}

// The pieces in flight: piece i is made into slot i % slots. A slot is free
// again once its piece was taken.
class Pieces {
public:
    Pieces(size_t count, size_t slots, const MakePiece& make)
        : count_(count), make_(make), text_(slots), ready_(slots, false)
    {
    }

    // A helper's loop: make what may be made, until all is or one failed.
    void help()
    {
        std::unique_lock lock(mutex_);
        for (;;) {
            changed_.wait(lock, [&] { return stop_ || next_ == count_ || mayMake(); });
            if (stop_ || next_ == count_)
                return;
            makeNext(lock);
        }
    }

    // The caller's loop: take the next piece when made, else make one, else wait.
    void takeAll(const TakePiece& take)
    {
        std::unique_lock lock(mutex_);
        while (taken_ < count_) {
            if (error_)
                std::rethrow_exception(error_);
            const size_t slot = taken_ % text_.size();
            if (ready_[slot]) {
                lock.unlock();
                take(text_[slot]);
                lock.lock();
                ready_[slot] = false;
                ++taken_;
                changed_.notify_all();
            } else if (mayMake()) {
                makeNext(lock);
            } else {
                changed_.wait(lock, [&] { return error_ || ready_[slot]; });
            }
        }
    }

    void stop()
    {
        const std::lock_guard lock(mutex_);
        stop_ = true;
        changed_.notify_all();
    }

private:
    bool mayMake() const { return next_ < count_ && next_ < taken_ + text_.size(); }

    // Called locked; makes piece next_ unlocked and marks it made (or the error).
    void makeNext(std::unique_lock<std::mutex>& lock)
    {
        const size_t piece = next_++;
        std::string& text = text_[piece % text_.size()];
        lock.unlock();
        std::exception_ptr failed;
        try {
            text.clear();
            make_(piece, text);
        } catch (...) {
            failed = std::current_exception();
        }
        lock.lock();
        if (failed) {
            error_ = failed;
            stop_ = true;
        } else {
            ready_[piece % text_.size()] = true;
        }
        changed_.notify_all();
    }

    const size_t count_;
    const MakePiece& make_;
    std::vector<std::string> text_;
    std::vector<bool> ready_;
    size_t next_ = 0, taken_ = 0;
    bool stop_ = false;
    std::exception_ptr error_;
    std::mutex mutex_;
    std::condition_variable changed_;
};

} // namespace

void makeInOrder(size_t count, const MakePiece& make, const TakePiece& take)
{
    if (count == 0)
        return;
    const size_t helpers = count > 1 ? helperThreads() : 0;
    Pieces pieces(count, 2 * (helpers + 1), make);
    std::vector<std::jthread> threads;
    try {
        for (size_t h = 0; h < helpers; ++h)
            threads.emplace_back([&pieces] { pieces.help(); });
        pieces.takeAll(take);
    } catch (...) {
        pieces.stop();
        threads.clear(); // joins them: they read `pieces` and `make`
        throw;
    }
}

} // namespace lockscope::reports::detail
