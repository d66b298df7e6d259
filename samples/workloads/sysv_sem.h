// SPDX-License-Identifier: GPL-2.0-or-later
#pragma once

// A System V semaphore set owned by this process: removed (IPC_RMID) by the
// destructor, so every exit path of a workload that returns normally cleans up.

#include <sys/ipc.h>
#include <sys/sem.h>

#include <string>

namespace lockscope::workload {

// glibc leaves the definition of union semun to the caller (see semctl(2)).
union SemArg {
    int val;
    semid_ds* buf;
    unsigned short* array;
};

class SemSet {
public:
    SemSet(const std::string& program, int nsems);
    ~SemSet();
    SemSet(const SemSet&) = delete;
    SemSet& operator=(const SemSet&) = delete;

    int id() const { return id_; }
    int size() const { return nsems_; }
    void setAll(unsigned short value);
    int value(int semnum) const;
    // Removes the set now; blocked semop callers return EIDRM. Idempotent.
    void remove();

private:
    std::string program_;
    int id_ = -1;
    int nsems_ = 0;
};

} // namespace lockscope::workload
