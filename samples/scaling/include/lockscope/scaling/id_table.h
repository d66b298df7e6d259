// SPDX-License-Identifier: GPL-2.0-or-later
#pragma once

// The IPC id table keyed by user-supplied keys ("ipc: rhashtable for ipc
// keys"): before = find a key by scanning every allocated id; after = a hash
// table from key to id. Both serialize get/create/remove on the ids rwsem taken
// for writing, as ipcget_public() does, so the scan length is lock hold time.

#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include "lockscope/scaling/lock_profile.h"
#include "lockscope/scaling/pair.h"

namespace lockscope::scaling {

class IdTable {
public:
    virtual ~IdTable() = default;
    // semget(key, IPC_CREAT): the id of key, creating it when absent.
    virtual int getOrCreate(int32_t key) = 0;
    // semget(key, 0): the id of key, or nothing.
    virtual std::optional<int> find(int32_t key) = 0;
    // IPC_RMID; false if id is not allocated.
    virtual bool remove(int id) = 0;
    // (key, id) pairs sorted by key: the table's contents, for comparisons.
    virtual std::vector<std::pair<int32_t, int>> contents() const = 0;
};

std::unique_ptr<IdTable> makeIdTable(Variant variant, LockProfile* profile = nullptr);

} // namespace lockscope::scaling
