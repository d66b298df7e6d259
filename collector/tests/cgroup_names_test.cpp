// SPDX-License-Identifier: GPL-2.0-or-later
// `lockscope record --per-cgroup / --cgroup / --lock-names` on this kernel.
// The cgroup tests make two cgroup v2 groups, move one contend-workload into
// each (mmap mode: its threads fight over their process's mmap_lock) and
// check that the capture splits the lock per group, and that a filter on one
// group keeps none of the other's waits. The name tests check that the same
// lock is named mmap_lock beside its caller's key, and that a semaphore
// array's lock is named by its slab cache where the kernel has
// bpf_get_kmem_cache.
#include <gtest/gtest.h>

#include <filesystem>
#include <map>
#include <set>
#include <string>
#include <vector>
#include <unistd.h>

#include "lockscope/capture/io.h"
#include "lockscope/record/cgroup_paths.h"
#include "run_process.h"
#include "spin_contention.h"

using namespace record_test;

namespace {

const std::string kBin = LOCKSCOPE_BIN;
const std::string kContend = CONTEND_BIN;

// Two cgroups under a parent of our own, removed at the end (their workloads have exited by then).
class TwoCgroups {
public:
    explicit TwoCgroups(const std::string& mount)
        : parent_("/lockscope-test-" + std::to_string(getpid()))
        , mount_(mount)
    {
        for (const std::string& d : { parent_, a(), b() })
            std::filesystem::create_directory(mount_ + d);
    }
    ~TwoCgroups()
    {
        for (const std::string& d : { a(), b(), parent_ })
            ::rmdir((mount_ + d).c_str());
    }
    TwoCgroups(const TwoCgroups&) = delete;
    TwoCgroups& operator=(const TwoCgroups&) = delete;
    std::string a() const { return parent_ + "/a"; }
    std::string b() const { return parent_ + "/b"; }
    // A shell command that moves itself into cgroup and becomes the workload.
    std::string runIn(const std::string& cgroup, const std::string& mode = "mmap") const
    {
        return "sh -c 'echo $$ > " + mount_ + cgroup + "/cgroup.procs && exec " + kContend + " " + mode + " 4 2'";
    }

private:
    std::string parent_, mount_;
};

std::string cgroup2MountOrSkip()
{
    try {
        return lockscope::record::cgroup2Mount();
    } catch (const lockscope::record::CgroupError&) {
        return {};
    }
}

// Why a cgroup test cannot run here; empty when it can.
std::string cgroupTestSkipReason()
{
    if (geteuid() != 0)
        return "skipped: loading BPF programs and making cgroups needs root (CI runs these as root)";
    if (cgroup2MountOrSkip().empty())
        return "skipped: no cgroup v2 hierarchy mounted on this host";
    return {};
}

// Waits (contentions) per cgroup path; "" = locks with no cgroup.
std::map<std::string, uint64_t> waitsByCgroup(const lockscope::Capture& c)
{
    std::map<std::string, uint64_t> by;
    for (const auto& l : c.locks)
        by[l.cgroup] += l.wait.count();
    return by;
}

// Holds per cgroup path, of the locks of one type.
std::map<std::string, uint64_t> holdsByCgroup(const lockscope::Capture& c, const std::string& type)
{
    std::map<std::string, uint64_t> by;
    for (const auto& l : c.locks)
        if (l.type == type)
            by[l.cgroup] += l.hold.count();
    return by;
}

lockscope::Capture recordBoth(const TwoCgroups& g, std::vector<std::string> flags, const std::string& tag,
                              const std::string& mode = "mmap")
{
    auto dir = tempDir();
    const std::string out = dir + "/" + tag + ".lockscope.json";
    std::vector<std::string> argv { kBin, "record", "--no-cpu", "--no-hold", "--no-syscalls", "-o", out };
    argv.insert(argv.end(), flags.begin(), flags.end());
    argv.insert(argv.end(), { "--", "/bin/sh", "-c", g.runIn(g.a(), mode) + " & " + g.runIn(g.b(), mode) + " & wait" });
    Exit e = run(argv, dir, tag);
    EXPECT_EQ(e.code, 0) << e.err;
    return lockscope::readCapture(out);
}

TEST(RecordCgroups, PerCgroupSplitsTwoGroupsAndTheFilterKeepsOne)
{
    if (const std::string why = cgroupTestSkipReason(); !why.empty())
        GTEST_SKIP() << why;
    const std::string mount = cgroup2MountOrSkip();
    TwoCgroups g(mount);

    const lockscope::Capture both = recordBoth(g, { "--per-cgroup", "--lock-names" }, "both");
    EXPECT_EQ(both.meta.filters.at("per_cgroup"), "true");
    auto by = waitsByCgroup(both);
    EXPECT_GT(by[g.a()], 0u) << "no waits in " << g.a();
    EXPECT_GT(by[g.b()], 0u) << "no waits in " << g.b();
    EXPECT_EQ(by[""], 0u) << "every lock of a per-cgroup capture names its cgroup";
    // Each group's own mmap_lock, keyed by its caller and the group.
    std::set<std::string> mmapLockIn;
    for (const auto& l : both.locks) {
        const std::string suffix = "#" + l.cgroup;
        ASSERT_GE(l.key.size(), suffix.size()) << l.key;
        EXPECT_EQ(l.key.substr(l.key.size() - suffix.size()), suffix) << l.key;
        if (l.name == "mmap_lock")
            mmapLockIn.insert(l.cgroup);
    }
    EXPECT_EQ(mmapLockIn.count(g.a()), 1u) << "no mmap_lock contended in " << g.a();
    EXPECT_EQ(mmapLockIn.count(g.b()), 1u) << "no mmap_lock contended in " << g.b();

    // Filtered in the kernel: the other group's waits never reach the maps.
    const lockscope::Capture onlyA = recordBoth(g, { "--per-cgroup", "--cgroup", g.a() }, "only-a");
    EXPECT_EQ(onlyA.meta.filters.at("cgroup"), g.a());
    by = waitsByCgroup(onlyA);
    EXPECT_GT(by[g.a()], 0u) << "no waits in " << g.a();
    by.erase(g.a());
    for (const auto& [cg, n] : by)
        EXPECT_EQ(n, 0u) << "waits from " << cg << " passed the filter on " << g.a();

    // The parent takes both children (the filter is on a subtree).
    const std::string parent = g.a().substr(0, g.a().size() - 2);
    by = waitsByCgroup(recordBoth(g, { "--per-cgroup", "--cgroup", mount + parent }, "parent"));
    EXPECT_GT(by[g.a()], 0u);
    EXPECT_GT(by[g.b()], 0u);
}

// Holds split like waits: each group's pthread mutexes (user-lock uprobes,
// which this host runs; the kernel hold probe needs fentry or kprobes) are
// held under its own cgroup, and keyed by it.
TEST(RecordCgroups, PerCgroupSplitsHoldsOfTwoGroups)
{
    if (const std::string why = cgroupTestSkipReason(); !why.empty())
        GTEST_SKIP() << why;
    const std::string mount = cgroup2MountOrSkip();
    TwoCgroups g(mount);

    const lockscope::Capture c = recordBoth(g, { "--per-cgroup", "--user-locks" }, "holds", "mutex");
    auto by = holdsByCgroup(c, "pthread-mutex");
    EXPECT_GT(by[g.a()], 0u) << "no pthread mutex holds in " << g.a();
    EXPECT_GT(by[g.b()], 0u) << "no pthread mutex holds in " << g.b();
    EXPECT_EQ(by[""], 0u) << "a hold with no cgroup in a per-cgroup capture";
    for (const auto& l : c.locks) {
        if (l.type == "pthread-mutex" && l.hold.count() > 0) {
            EXPECT_NE(l.key.find("#" + l.cgroup), std::string::npos) << l.key;
        }
    }
}

TEST(RecordCgroups, BadCgroupGivesOneLineAndExitsNonZero)
{
    auto dir = tempDir();
    Exit e = run({ kBin, "record", "--cgroup", "/no/such/lockscope-cgroup", "-o", dir + "/x.json", "--", "true" },
        dir, "bad");
    EXPECT_NE(e.code, 0);
    EXPECT_NE(e.err.find("no/such/lockscope-cgroup"), std::string::npos) << e.err;
    EXPECT_FALSE(std::filesystem::exists(dir + "/x.json"));
}

const lockscope::ProbeStatus* statusOf(const lockscope::Capture& c, const std::string& name)
{
    for (const auto& p : c.probes)
        if (p.name == name)
            return &p;
    return nullptr;
}

lockscope::Capture recordNamed(const std::string& mode, const std::vector<std::string>& flags, const std::string& tag)
{
    auto dir = tempDir();
    const std::string out = dir + "/" + tag + ".lockscope.json";
    std::vector<std::string> argv { kBin, "record", "--lock-names", "--no-cpu", "--no-hold", "--no-syscalls", "-o",
        out };
    argv.insert(argv.end(), flags.begin(), flags.end());
    argv.insert(argv.end(), { "--", kContend, mode, mode == "mmap" ? "4" : "8", "2" });
    Exit e = run(argv, dir, tag);
    EXPECT_EQ(e.code, 0) << e.err;
    return lockscope::readCapture(out);
}

TEST(RecordLockNames, TheProcessMmapLockIsNamedBesideItsKeyAndFiltersByName)
{
    if (geteuid() != 0)
        GTEST_SKIP() << "skipped: loading BPF programs needs root (CI runs these as root)";
    const lockscope::Capture c = recordNamed("mmap", {}, "mmap");
    ASSERT_NE(statusOf(c, "lock_names"), nullptr);
    const lockscope::Lock* mm = nullptr;
    for (const auto& l : c.locks)
        if (l.name == "mmap_lock" && (!mm || l.wait.count() > mm->wait.count()))
            mm = &l;
    ASSERT_NE(mm, nullptr) << "no lock named mmap_lock";
    EXPECT_EQ(mm->type, "rwsem");
    EXPECT_NE(mm->key, "mmap_lock") << "the key stays the caller's";
    EXPECT_NE(mm->key.find("rwsem@"), std::string::npos) << mm->key;
    EXPECT_GT(mm->wait.count(), 0u);

    const lockscope::Capture byName = recordNamed("mmap", { "--lock", "mmap_lock" }, "by-name");
    ASSERT_FALSE(byName.locks.empty());
    for (const auto& l : byName.locks)
        EXPECT_EQ(l.name, "mmap_lock") << l.key;
}

TEST(RecordLockNames, ASemaphoreArrayLockIsNamedByItsSlabCache)
{
    if (geteuid() != 0)
        GTEST_SKIP() << "skipped: loading BPF programs needs root (CI runs these as root)";
    const lockscope::Capture c = recordNamed("semop", {}, "semop");
    const lockscope::ProbeStatus* st = statusOf(c, "lock_names");
    ASSERT_NE(st, nullptr);
    if (st->reason.find("via bpf_get_kmem_cache") == std::string::npos)
        GTEST_SKIP() << "skipped: no slab cache names on this kernel: " << st->reason;
    LOCKSCOPE_REQUIRE_SPIN_WAITS();
    const lockscope::Lock* sem = nullptr;
    for (const auto& l : c.locks)
        if (l.type == "spinlock" && l.key.find("sem") != std::string::npos && (!sem || l.wait.count() > sem->wait.count()))
            sem = &l;
    ASSERT_NE(sem, nullptr) << "no semaphore-array contention recorded";
    // kvzalloc'ed with the array's semaphores: a kmalloc cache, charged to the memcg.
    EXPECT_EQ(sem->name.rfind("&kmalloc", 0), 0u) << sem->key << " named '" << sem->name << "'";
}

} // namespace
