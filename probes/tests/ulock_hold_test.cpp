// SPDX-License-Identifier: GPL-2.0-or-later
// User-lock holds (ulock.bpf.c) through real uprobes on two functions of this
// test binary, called by the test itself: a hold whose acquisition stamp lies
// after its release is dropped and counted, and --per-cgroup keys the hold by
// the caller's cgroup v2 id.
#include <climits>
#include <fstream>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include <sys/stat.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <gtest/gtest.h>

#include "lockscope_bpf.h" // before the skeleton, which uses its structs

#include "test_support.h"
#include "ulock.skel.h"

// The "lock" functions the uprobes attach to: 0 = acquired, as pthread_mutex_lock.
extern "C" __attribute__((noinline, used)) int ls_ulock_test_lock(void* lock)
{
    asm volatile("" : : "r"(lock) : "memory");
    return 0;
}
extern "C" __attribute__((noinline, used)) int ls_ulock_test_unlock(void* lock)
{
    asm volatile("" : : "r"(lock) : "memory");
    return 0;
}

namespace {

struct Destroy {
    void operator()(ls_ulock* s) const { ls_ulock__destroy(s); }
};

class UlockHold : public ::testing::Test {
protected:
    void SetUp() override { LOCKSCOPE_REQUIRE_ROOT(); }

    void load(bool per_cgroup)
    {
        skel_.reset(ls_ulock__open());
        ASSERT_TRUE(skel_);
        skel_->rodata->per_cgroup = per_cgroup;
        ASSERT_EQ(ls_ulock__load(skel_.get()), 0);
        const std::string self = std::filesystem::read_symlink("/proc/self/exe");
        struct Hook {
            bpf_program* prog;
            const char* fn;
            bool ret;
        } hooks[] = { { skel_->progs.ulock_enter, "ls_ulock_test_lock", false },
            { skel_->progs.ulock_return, "ls_ulock_test_lock", true },
            { skel_->progs.uunlock_enter, "ls_ulock_test_unlock", false } };
        for (const Hook& h : hooks) {
            LIBBPF_OPTS(bpf_uprobe_opts, opts, .retprobe = h.ret, .func_name = h.fn);
            bpf_link* l = bpf_program__attach_uprobe_opts(h.prog, 0, self.c_str(), 0, &opts);
            ASSERT_NE(l, nullptr) << "uprobe on " << h.fn;
            links_.emplace_back(l, &bpf_link__destroy);
        }
    }
    uint64_t counter(ls_counter c) const { return sumCounter(bpf_map__fd(skel_->maps.counters), c); }
    // Every filed user-lock hold: key -> histogram count.
    std::vector<std::pair<ls_ulock_key, uint64_t>> holds() const
    {
        std::vector<std::pair<ls_ulock_key, uint64_t>> out;
        const int fd = bpf_map__fd(skel_->maps.ul_holds);
        ls_ulock_key key {}, next {};
        const void* prev = nullptr;
        while (bpf_map_get_next_key(fd, prev, &next) == 0) {
            key = next;
            prev = &key;
            ls_hist h {};
            if (bpf_map_lookup_elem(fd, &key, &h) == 0)
                out.emplace_back(key, h.count);
        }
        return out;
    }

    std::unique_ptr<ls_ulock, Destroy> skel_;
    std::vector<std::unique_ptr<bpf_link, decltype(&bpf_link__destroy)>> links_;
};

TEST_F(UlockHold, AHoldStampedAfterItsReleaseIsDroppedAndCounted)
{
    load(false);
    int lock = 0;
    ls_ulock_test_lock(&lock);
    // Move the held entry's stamp an hour ahead, as a second acquisition
    // stamped after the release began would.
    const int fd = bpf_map__fd(skel_->maps.ul_holding);
    ls_ul_held_key key {}, next {};
    ASSERT_EQ(bpf_map_get_next_key(fd, nullptr, &next), 0) << "the acquisition was not seen";
    key = next;
    ls_ul_held held {};
    ASSERT_EQ(bpf_map_lookup_elem(fd, &key, &held), 0);
    EXPECT_EQ(key.lock, reinterpret_cast<uint64_t>(&lock));
    held.ts += 3600ULL * 1000 * 1000 * 1000;
    ASSERT_EQ(bpf_map_update_elem(fd, &key, &held, BPF_EXIST), 0);
    ls_ulock_test_unlock(&lock);
    EXPECT_TRUE(holds().empty()) << "the impossible hold was filed";
    EXPECT_EQ(counter(LS_C_HOLD_IMPOSSIBLE), 1u);
    EXPECT_EQ(counter(LS_C_ULOCK_UNMATCHED), 0u) << "its entry was found";
    ls_ulock_test_lock(&lock);
    ls_ulock_test_unlock(&lock);
    auto h = holds();
    ASSERT_EQ(h.size(), 1u);
    EXPECT_EQ(h[0].second, 1u) << "a real hold after it is filed as usual";
    EXPECT_EQ(counter(LS_C_HOLD_IMPOSSIBLE), 1u);
}

// The cgroup v2 id of this process: the inode of its cgroup directory.
uint64_t ownCgroupId()
{
    std::ifstream f("/proc/self/cgroup");
    std::string line, path;
    while (std::getline(f, line))
        if (line.rfind("0::", 0) == 0)
            path = line.substr(3);
    for (const char* mount : { "/sys/fs/cgroup", "/sys/fs/cgroup/unified" }) {
        struct stat st {};
        if (!path.empty() && ::stat((std::string(mount) + path).c_str(), &st) == 0
            && std::filesystem::exists(std::string(mount) + "/cgroup.controllers"))
            return st.st_ino;
    }
    return 0;
}

TEST_F(UlockHold, PerCgroupKeysHoldsByTheHoldersCgroup)
{
    const uint64_t cg = ownCgroupId();
    if (cg == 0)
        GTEST_SKIP() << "skipped: no cgroup v2 hierarchy at /sys/fs/cgroup";
    for (bool per_cgroup : { false, true }) {
        SCOPED_TRACE(per_cgroup ? "--per-cgroup" : "no --per-cgroup");
        load(per_cgroup);
        int lock = 0;
        ls_ulock_test_lock(&lock);
        ls_ulock_test_unlock(&lock);
        auto h = holds();
        ASSERT_EQ(h.size(), 1u);
        EXPECT_EQ(h[0].first.cgroup, per_cgroup ? cg : 0u);
        links_.clear();
    }
}

} // namespace
