// SPDX-License-Identifier: GPL-2.0-or-later
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <tuple>

namespace lockscope::record {

// The keys kernel locks were given in the last windows of a recording read
// out window by window (lockscope agent). A kernel lock without a symbol is
// keyed by its walked callers; in a window where none of its events was
// walked (stack budget, nested walks, a burst cut by the window's end) it
// keeps the key its walks gave it lately instead of "<type>@unknown", so a
// lock's series does not lose those events to another one. A key no walk
// confirmed for kWindows windows is forgotten: by then the address may
// hold another lock, and memory stays bounded by the locks of a few windows.
class LockKeyMemory {
public:
    // Address, tgid (0 unless per tgid), cgroup (0 unless per cgroup), base type.
    using Identity = std::tuple<uint64_t, uint32_t, uint64_t, std::string>;
    static constexpr uint64_t kWindows = 3;

    struct Key {
        std::string key;
        bool passed = false; // a walked event of the lock passed the filters
        uint64_t window = 0; // when a walk last gave it
    };

    // The key identity was given lately, or null.
    const Key* recall(const Identity& identity) const;
    // The key identity's walks gave it in this window.
    void remember(const Identity& identity, std::string key, bool passed);
    // The window ends: keys unconfirmed for kWindows windows are forgotten.
    void endWindow();
    size_t size() const { return keys_.size(); }

private:
    std::map<Identity, Key> keys_;
    uint64_t window_ = 0;
};

} // namespace lockscope::record
