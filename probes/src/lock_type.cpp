// SPDX-License-Identifier: GPL-2.0-or-later
#include "lockscope/probes/probes.h"
#include "lockscope_bpf.h"

namespace lockscope::probes {

// Mirrors how the kernel's call sites combine the LCB_F_* flags
// (kernel/locking/*.c) and the names perf lock contention prints.
std::string lockTypeName(uint32_t flags)
{
    const bool spin = flags & LS_LCB_F_SPIN;
    const bool read = flags & LS_LCB_F_READ;
    const bool write = flags & LS_LCB_F_WRITE;
    std::string mode = read && write ? ":RW" : read ? ":R" : write ? ":W" : "";
    // The wait probe keeps LCB_F_SPIN on a mutex wait only while it never
    // slept: "mutex:spin" waits got the lock by optimistic spinning.
    if (flags & LS_LCB_F_MUTEX)
        return spin ? "mutex:spin" : "mutex";
    if (flags & LS_LCB_F_RT)
        return "rtmutex" + mode;
    if (flags & LS_LCB_F_PERCPU)
        return "percpu-rwsem" + mode;
    if (spin)
        return (read || write) ? "rwlock" + mode : "spinlock";
    if (read || write)
        return "rwsem" + mode;
    if (flags == 0)
        return "semaphore";
    return "unknown(0x" + [flags] {
        static const char* hex = "0123456789abcdef";
        std::string s;
        for (uint32_t v = flags; v; v >>= 4)
            s.insert(s.begin(), hex[v & 15]);
        return s;
    }() + ")";
}

} // namespace lockscope::probes
