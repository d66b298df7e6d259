// SPDX-License-Identifier: GPL-2.0-or-later
#include "sysv_sem.h"

#include <vector>

#include "common/workload.h"

namespace lockscope::workload {

SemSet::SemSet(const std::string& program, int nsems) : program_(program), nsems_(nsems)
{
    id_ = semget(IPC_PRIVATE, nsems, IPC_CREAT | 0600);
    if (id_ < 0)
        die(program_, "semget(IPC_PRIVATE, " + std::to_string(nsems) +
                          ") failed (check kernel.sem limits in /proc/sys/kernel/sem)");
}

SemSet::~SemSet()
{
    remove();
}

void SemSet::setAll(unsigned short value)
{
    std::vector<unsigned short> values(static_cast<size_t>(nsems_), value);
    SemArg arg{};
    arg.array = values.data();
    if (semctl(id_, 0, SETALL, arg) < 0)
        die(program_, "semctl(SETALL)");
}

int SemSet::value(int semnum) const
{
    return semctl(id_, semnum, GETVAL);
}

void SemSet::remove()
{
    if (id_ >= 0) {
        semctl(id_, 0, IPC_RMID);
        id_ = -1;
    }
}

} // namespace lockscope::workload
