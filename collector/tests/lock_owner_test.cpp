// SPDX-License-Identifier: GPL-2.0-or-later
// `lockscope record --lock-owner` on this kernel: owner-workload holds a
// pipe's mutex on purpose (its owner thread sleeps in a userfaultfd fault
// inside pipe_write) while a second thread waits for it. The capture must
// name that thread as the owner of the waiter's lock, and where it was.
#include <gtest/gtest.h>

#include <filesystem>
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
        if (f.function.str().find(function) != std::string::npos)
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

// The owner's stack walk is under the stack budget: a wait whose own stack
// is not walked walks no owner either, and says so in the stats. contend-workload
// mmap's threads queue on their process's mmap_lock, owned by a writer.
TEST(RecordLockOwner, OwnerStacksAreWalkedOnlyForWalkedWaits)
{
    if (geteuid() != 0)
        GTEST_SKIP() << "skipped: loading BPF programs needs root (CI runs these as root)";
    auto dir = tempDir();
    auto record = [&](const std::string& name, const std::vector<std::string>& flags) {
        const std::string out = dir + "/" + name + ".lockscope.json";
        std::vector<std::string> argv { kBin, "record", "--lock-owner", "--no-cpu", "--no-hold", "--no-syscalls", "-o",
            out };
        argv.insert(argv.end(), flags.begin(), flags.end());
        argv.insert(argv.end(), { "--", CONTEND_BIN, "mmap", "4", "2" });
        Exit e = run(argv, dir, name);
        EXPECT_EQ(e.code, 0) << e.err;
        return lockscope::readCapture(out);
    };
    auto owners = [](const lockscope::Capture& c) {
        uint64_t n = 0;
        for (const auto& l : c.locks)
            for (const auto& s : l.sites)
                for (const auto& h : s.holders)
                    n += h.owner_tid ? h.count : 0;
        return n;
    };
    // 1 in 1000 waits walked per CPU: nearly every owner goes unwalked, counted.
    const auto sampled = record("sampled", { "--stack-sample", "1000" });
    if (owners(sampled) < 4)
        GTEST_SKIP() << "skipped: only " << owners(sampled) << " waits found an owner (no mmap_lock contention)";
    EXPECT_GT(sampled.stats.owner_stacks_unsampled, 0u);
    EXPECT_LE(sampled.stats.owner_stacks_unsampled, sampled.stats.stacks_unsampled)
        << "an owner skipped whose wait was walked";
    // An owner is counted when the wait begins; a wait whose record the map
    // refused (busy or full) or that aborted never reaches the capture.
    const auto& st = sampled.stats;
    EXPECT_LE(st.owner_stacks_unsampled, owners(sampled) + st.map_busy + st.map_full + st.aborted_waits);
    // Every wait walked: every owner too.
    const auto every = record("every", { "--stack-budget", "0" });
    EXPECT_EQ(every.stats.owner_stacks_unsampled, 0u);
}

std::string goTool()
{
    for (const char* p : { "/usr/bin/go", "/usr/lib/go/bin/go" })
        if (std::filesystem::exists(p))
            return p;
    return "";
}

// A fresh --lock-owner recording through `export --format pprof-holders` into
// its real reader: go tool pprof charges the wait to where the owner slept.
TEST(RecordLockOwner, HoldersProfileOfALiveRecordingReadsInGoToolPprof)
{
    if (geteuid() != 0)
        GTEST_SKIP() << "skipped: loading BPF programs needs root (CI runs these as root)";
    const std::string go = goTool();
    if (go.empty())
        GTEST_SKIP() << "SKIPPED: no go tool (/usr/bin/go): install golang-go (scripts/debian-packages.txt) "
                        "to read the holders profile with go tool pprof";
    auto dir = tempDir();
    const std::string capture = dir + "/owner.lockscope.json", profile = dir + "/holders.pb.gz";
    Exit e = run({ kBin, "record", "--lock-owner", "--no-cpu", "--no-hold", "--no-syscalls", "-o", capture, "--",
                     kOwnerWorkload },
        dir, "record");
    ASSERT_EQ(e.code, 0) << e.err;
    e = run({ kBin, "export", capture, "--format", "pprof-holders", "-o", profile }, dir, "export");
    ASSERT_EQ(e.code, 0) << e.err;
    e = run({ go, "tool", "pprof", "-top", "-unit=ns", profile }, dir, "pprof");
    ASSERT_EQ(e.code, 0) << e.err;
    EXPECT_NE(e.out.find("Type: delay"), std::string::npos) << e.out;
    // The owner's leaf is the scheduler; handle_userfault is on its stack, so in -top's cumulative column.
    EXPECT_NE(e.out.find("handle_userfault"), std::string::npos) << "no holder frame in\n" << e.out;
    e = run({ go, "tool", "pprof", "-traces", profile }, dir, "traces");
    ASSERT_EQ(e.code, 0) << e.err;
    EXPECT_NE(e.out.find("owner_comm:  ls-owner"), std::string::npos) << e.out;
}

} // namespace
