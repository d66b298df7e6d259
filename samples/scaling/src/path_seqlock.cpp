// SPDX-License-Identifier: GPL-2.0-or-later
#include "lockscope/scaling/path_seqlock.h"

#include "lockscope/scaling/locks.h"

namespace lockscope::scaling {

bool PathSeqlock::Snapshot::consistent() const
{
    for (const auto& c : words)
        for (uint64_t w : c)
            if (w != c[0])
                return false;
    return true;
}

namespace {

// The protected data is read concurrently with writes by design (readers
// detect and discard torn copies), so every word is an atomic. No fences (TSan
// does not model them): writers store words with release after making the
// count odd, readers load them with acquire, so a reader that sees any new
// word also sees the odd count on its re-check. On x86 all of these are plain moves.
template <class Lock>
class SeqlockPath : public PathSeqlock {
public:
    explicit SeqlockPath(LockProfile* p) : lock_(p) {}

    void rename(unsigned component, uint64_t generation) override
    {
        Guard g(lock_);
        writeBegin();
        // d_move() work: the new name is hashed while the seqcount is odd.
        uint64_t h = generation;
        for (int i = 0; i < 64; ++i)
            h = (h ^ (h >> 29)) * 0xbf58476d1ce4e5b9ull;
        hashes_[component % kComponents].store(h, std::memory_order_relaxed);
        for (auto& w : data_[component % kComponents])
            w.store(generation, std::memory_order_release);
        writeEnd();
    }

    Snapshot read(bool forceLocked) override
    {
        Snapshot s;
        if (!forceLocked) {
            uint64_t seq = seq_.load(std::memory_order_acquire);
            if ((seq & 1) == 0) {
                copy(s);
                if (seq_.load(std::memory_order_relaxed) == seq)
                    return s;
            }
        }
        s.locked = true;
        lockedRead(s);
        return s;
    }

protected:
    // Out of line so that both variants run the very same path walk code.
    [[gnu::noinline]] void copy(Snapshot& s) const
    {
        static constexpr char kHex[] = "0123456789abcdef";
        size_t pos = 0;
        for (unsigned c = 0; c < kComponents; ++c) {
            s.text[pos++] = '/';
            for (unsigned w = 0; w < kWords; ++w) {
                uint64_t v = data_[c][w].load(std::memory_order_acquire);
                s.words[c][w] = v;
                for (int shift = 60; shift >= 0; shift -= 4)
                    s.text[pos++] = kHex[(v >> shift) & 0xf];
            }
        }
        s.text[pos] = '\0';
    }
    virtual void lockedRead(Snapshot& s) = 0;

    mutable Instrumented<Lock> lock_;

    void writeBegin() { seq_.store(seq_.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed); }
    void writeEnd() { seq_.store(seq_.load(std::memory_order_relaxed) + 1, std::memory_order_release); }

private:

    std::atomic<uint64_t> seq_{0};
    std::array<std::array<std::atomic<uint64_t>, kWords>, kComponents> data_{};
    std::array<std::atomic<uint64_t>, kComponents> hashes_{};
};

class SpinlockReaders final : public SeqlockPath<SpinLock> {
public:
    using SeqlockPath::SeqlockPath;

protected:
    // write_seqlock(): the blocking reader poses as a writer, so the count
    // goes odd and every concurrent lockless reader fails and must lock too.
    void lockedRead(Snapshot& s) override
    {
        Guard g(lock_);
        writeBegin();
        copy(s);
        writeEnd();
    }
};

class RwlockReaders final : public SeqlockPath<SpinRwLock> {
public:
    using SeqlockPath::SeqlockPath;

protected:
    // Excludes writers only; the count is untouched, so lockless readers and
    // other blocking readers carry on.
    void lockedRead(Snapshot& s) override
    {
        SharedGuard g(lock_);
        copy(s);
    }
};

} // namespace

std::unique_ptr<PathSeqlock> makePathSeqlock(Variant variant, LockProfile* profile)
{
    if (variant == Variant::Before)
        return std::make_unique<SpinlockReaders>(profile);
    return std::make_unique<RwlockReaders>(profile);
}

} // namespace lockscope::scaling
