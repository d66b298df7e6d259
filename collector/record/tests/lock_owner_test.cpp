// SPDX-License-Identifier: GPL-2.0-or-later
// `lockscope record --lock-owner` on this kernel: owner-workload holds a
// pipe's mutex on purpose (its owner thread sleeps in a userfaultfd fault
// inside pipe_write) while a second thread waits for it. The capture must
// name that thread as the owner of the waiter's lock, and where it was.
#include <gtest/gtest.h>

#include <string>
#include <vector>
#include <unistd.h>

#include "lockscope/capture/io.h"
#include "run_process.h"

using namespace record_test;

namespace {

const std::string kBin = LOCKSCOPE_BIN;
const std::string kOwnerWorkload = OWNER_WORKLOAD_BIN;

// pipe_write became anon_pipe_write in 6.16: matched by substring.
bool hasFrame(const lockscope::Stack& s, const std::string& function)
{
    for (const auto& f : s.frames)
        if (f.function.find(function) != std::string::npos)
            return true;
    return false;
}

// mode: owner-workload's argument ("" for the pipe mutex); the waiter's lock
// is of type `type`, keyed at a function containing `caller`, which is also
// on the owner's stack, where it sleeps in the userfaultfd fault.
void expectOwnerNamed(const std::string& mode, const std::string& type, const std::string& caller)
{
    if (geteuid() != 0)
        GTEST_SKIP() << "skipped: loading BPF programs needs root (CI runs these as root)";
    auto dir = tempDir();
    const std::string out = dir + "/owner.lockscope.json";
    std::vector<std::string> argv { kBin, "record", "--lock-owner", "--no-cpu", "--no-hold", "--no-syscalls", "-o",
        out, "--", kOwnerWorkload };
    if (!mode.empty())
        argv.push_back(mode);
    Exit e = run(argv, dir, "owner");
    ASSERT_EQ(e.code, 0) << e.err;
    const lockscope::Capture c = lockscope::readCapture(out);
    ASSERT_TRUE(c.workload.results.contains("owner_tid")) << e.err;
    const auto ownerTid = c.workload.results["owner_tid"].get<uint32_t>();
    const lockscope::StackIndex stacks(c);

    const lockscope::Holder* found = nullptr;
    const lockscope::Lock* lock = nullptr;
    for (const auto& l : c.locks)
        for (const auto& s : l.sites)
            for (const auto& h : s.holders)
                if (h.owner_tid == ownerTid && !found) {
                    found = &h;
                    lock = &l;
                }
    ASSERT_NE(found, nullptr) << "no lock names owner " << ownerTid << "\n" << e.err;
    EXPECT_EQ(lock->type, type) << lock->key;
    EXPECT_NE(lock->key.find(caller), std::string::npos) << lock->key << ": the waiter's own write";
    EXPECT_EQ(found->owner_comm, "ls-owner");
    EXPECT_GE(found->count, 1u);
    EXPECT_GT(found->wait_ns, 0u);
    const lockscope::Stack* where = stacks.find(found->stack_id);
    ASSERT_NE(where, nullptr);
    // The owner slept in the userfaultfd fault, inside its own write.
    EXPECT_TRUE(hasFrame(*where, "handle_userfault")) << "owner stack " << found->stack_id;
    EXPECT_TRUE(hasFrame(*where, caller)) << "owner stack " << found->stack_id;
    EXPECT_EQ(c.meta.filters.at("lock_owner"), "true");
}

TEST(RecordLockOwner, NamesTheOwnerOfAHeldPipeMutexAndWhereItSlept)
{
    expectOwnerNamed("", "mutex", "pipe_write");
}

// shmem's write holds the inode's i_rwsem for writing: a writer-owned rwsem.
TEST(RecordLockOwner, NamesTheWriterOwningAnInodeRwsemAndWhereItSlept)
{
    expectOwnerNamed("rwsem", "rwsem", "shmem_file_write_iter");
}

} // namespace
