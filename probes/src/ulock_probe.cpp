// SPDX-License-Identifier: GPL-2.0-or-later
// Userspace lock wait and hold via uprobes on the functions of each UserLockSpec.
#include <cerrno>
#include <optional>
#include <unordered_map>

#include <signal.h>

#include <bpf/bpf.h>

#include "bpf_util.h"
#include "family.h"
#include "ulock.skel.h"

namespace lockscope::probes {

std::vector<UserLockSpec> defaultUserLocks()
{
    return { UserLockSpec { "libc.so.6", "pthread_mutex_lock", "pthread_mutex_unlock", "pthread-mutex" } };
}

namespace detail {

namespace {

using UlockSkel = SkelPtr<ls_ulock, ls_ulock__destroy>;

class UlockFamily final : public Family {
public:
    UlockFamily(UlockSkel skel, std::vector<UserLockSpec> specs)
        : skel_(std::move(skel))
        , specs_(std::move(specs))
    {
    }

    // Empty on success, else why.
    std::string attach(uint32_t spec_idx)
    {
        const UserLockSpec& spec = specs_[spec_idx];
        struct Hook {
            bpf_program* prog;
            const std::string* fn;
            bool ret;
        } hooks[] = { { skel_->progs.ulock_enter, &spec.lock_fn, false },
            { skel_->progs.ulock_return, &spec.lock_fn, true },
            { skel_->progs.uunlock_enter, &spec.unlock_fn, false } };
        std::vector<bpf_link*> got;
        for (const Hook& h : hooks) {
            LIBBPF_OPTS(
                bpf_uprobe_opts, opts, .bpf_cookie = spec_idx, .retprobe = h.ret, .func_name = h.fn->c_str());
            bpf_link* l = bpf_program__attach_uprobe_opts(h.prog, -1, spec.binary.c_str(), 0, &opts);
            if (!l) {
                const std::string err = attachError();
                for (bpf_link* g : got)
                    bpf_link__destroy(g);
                return (h.ret ? "uretprobe " : "uprobe ") + spec.binary + ":" + *h.fn + ": " + err;
            }
            got.push_back(l);
        }
        for (bpf_link* l : got)
            links_.add(l);
        return {};
    }

    void read(Snapshot& out) const override
    {
        readMap(bpf_map__fd(skel_->maps.ul_waits), out.user_waits);
        readMap(bpf_map__fd(skel_->maps.ul_holds), out.user_holds);
    }

    bool drainable() const override { return true; }
    void drain(Snapshot& out) override
    {
        const uint32_t closed = closeGeneration(&skel_->bss->ul_gen);
        settleGenerations();
        readMap(bpf_map__fd(skel_->maps.ul_waits), out.user_waits, closed);
        readMap(bpf_map__fd(skel_->maps.ul_holds), out.user_holds, closed);
        out.stats.stale_holds += dropExitedThreads();
    }
    uint64_t recursionMisses() const override { return 0; }
    void detach() override { links_.clear(); }
    std::vector<int> progFds() const override
    {
        return { bpf_program__fd(skel_->progs.ulock_enter), bpf_program__fd(skel_->progs.ulock_return),
            bpf_program__fd(skel_->progs.uunlock_enter) };
    }
    bool empty() const { return links_.empty(); }

private:
    // The pending entries of threads that have exited: a thread that exits
    // holding a user lock (or is killed while it waits for one) never reaches
    // the unlock or the lock's return, and for a reader that never stops its
    // entries would fill the maps. Returns the holds dropped (stale holds).
    uint64_t dropExitedThreads() const
    {
        std::unordered_map<uint32_t, bool> gone;
        auto exited = [&gone](uint32_t tid) {
            const auto [it, added] = gone.try_emplace(tid, false);
            if (added) // EPERM: alive, another user's
                it->second = kill(static_cast<pid_t>(tid), 0) != 0 && errno == ESRCH;
            return it->second;
        };
        uint64_t dropped = 0;
        const int holding = bpf_map__fd(skel_->maps.ul_holding);
        for (const ls_ul_held_key& k : keysOf<ls_ul_held_key>(holding))
            if (exited(k.tid) && bpf_map_delete_elem(holding, &k) == 0)
                ++dropped;
        const int waiting = bpf_map__fd(skel_->maps.ul_waiting);
        for (const uint32_t tid : keysOf<uint32_t>(waiting))
            if (exited(tid))
                bpf_map_delete_elem(waiting, &tid);
        return dropped;
    }

    // Every entry, or with `closed` only that generation's, emptied in place
    // once read: deleted, a busy lock's entries would be created again each
    // window in bursts the map's element cache refuses (wait.bpf.c's waits).
    // An entry still empty from the drain before is deleted.
    void readMap(int fd, std::vector<LockRecord>& out, std::optional<uint32_t> closed = std::nullopt) const
    {
        const ls_hist empty = emptyHist();
        for (const ls_ulock_key& key : keysOf<ls_ulock_key>(fd)) {
            if (closed && key.gen != *closed)
                continue;
            ls_hist h {};
            if (bpf_map_lookup_elem(fd, &key, &h) != 0)
                continue;
            if (closed && h.count == 0) { // idle for a whole window: its process may be gone
                bpf_map_delete_elem(fd, &key);
                continue;
            }
            if (closed)
                bpf_map_update_elem(fd, &key, &empty, BPF_EXIST);
            LockRecord r;
            r.lock_addr = key.lock;
            r.ustack_id = key.ustack;
            r.flags = key.spec;
            r.tgid = key.tgid;
            r.cgroup = key.cgroup;
            r.type = key.spec < specs_.size() ? specs_[key.spec].type : "user-lock";
            r.hist = histFromKernel(h);
            if (!r.hist.empty())
                out.push_back(std::move(r));
        }
    }

    UlockSkel skel_;
    std::vector<UserLockSpec> specs_;
    Links links_;
};

} // namespace

std::unique_ptr<Family> openUserLocks(FamilyContext& ctx)
{
    const auto& specs = ctx.options.user_locks;
    if (specs.empty()) {
        ctx.status.push_back({ "user_locks", "", "", false, kProbeDisabled });
        return nullptr;
    }
    auto skipAll = [&](const std::string& why) {
        for (const UserLockSpec& s : specs)
            ctx.status.push_back({ "user_lock:" + s.lock_fn, s.binary + ":" + s.lock_fn + "," + s.unlock_fn,
                "uprobe", false, why });
        return nullptr;
    };
    UlockSkel skel(ls_ulock__open());
    if (!skel)
        return skipAll("open failed: " + errnoText(errno));
    configureRodata(skel->rodata, ctx.options);
    if (int err = ctx.maps.reuseIn(skel->obj); err)
        return skipAll("map setup failed: " + errnoText(err));
    clearLibbpfLog();
    if (int err = ls_ulock__load(skel.get()); err)
        return skipAll("load failed: " + errnoText(err));
    auto family = std::make_unique<UlockFamily>(std::move(skel), specs);
    for (uint32_t i = 0; i < specs.size(); ++i) {
        const std::string why = family->attach(i);
        ctx.status.push_back({ "user_lock:" + specs[i].lock_fn,
            specs[i].binary + ":" + specs[i].lock_fn + "," + specs[i].unlock_fn, "uprobe", why.empty(),
            why });
    }
    if (family->empty())
        return nullptr;
    return family;
}

} // namespace detail
} // namespace lockscope::probes
