// SPDX-License-Identifier: GPL-2.0-or-later
#pragma once

// A path (a chain of directory names) protected by a seqlock, as the dentry
// tree is by rename_lock ("seqlock: use rwlock for blocking readers"). Readers
// first try locklessly; a reader whose attempt raced with a rename retries
// while holding the lock so that it cannot starve (read_seqbegin_or_lock()).
// before = that blocking reader takes the seqlock as a writer (spinlock and
// sequence bump), serializing all blocking readers and making every concurrent
// lockless reader fail and block as well; after = it takes a rwlock for
// reading without touching the count, so blocking readers run in parallel and
// lockless readers are not disturbed; only renames exclude.

#include <array>
#include <atomic>
#include <cstdint>
#include <memory>
#include <string>

#include "lockscope/scaling/lock_profile.h"
#include "lockscope/scaling/pair.h"

namespace lockscope::scaling {

class PathSeqlock {
public:
    static constexpr unsigned kComponents = 16;
    static constexpr unsigned kWords = 4;  // a name is 4 words; renames write the same word 4 times

    virtual ~PathSeqlock() = default;
    // rename(): component c gets a new name derived from generation.
    virtual void rename(unsigned component, uint64_t generation) = 0;

    struct Snapshot {
        std::array<std::array<uint64_t, kWords>, kComponents> words{};
        // The path as d_path() would render it ("/<hex>/<hex>..."), built while
        // the words are read: rendering is what makes a path walk long.
        std::array<char, kComponents * (kWords * 16 + 1) + 1> text{};
        bool locked = false;  // true if the read needed the lock
        // A torn read would mix two names inside one component.
        bool consistent() const;
    };
    // d_path(): a consistent copy of the whole path. forceLocked skips the
    // lockless attempt (a reader that already failed it).
    virtual Snapshot read(bool forceLocked = false) = 0;
};

std::unique_ptr<PathSeqlock> makePathSeqlock(Variant variant, LockProfile* profile = nullptr);

} // namespace lockscope::scaling
