// SPDX-License-Identifier: GPL-2.0-or-later
// lock:contention_begin/end: tp_btf, then raw_tp, then tracepoint.
#include <algorithm>
#include <cerrno>
#include <cstring>
#include <set>
#include <span>
#include <vector>

#include <bpf/bpf.h>
#include <bpf/btf.h>

#include "bpf_util.h"
#include "family.h"
#include "holder_table.h"
#include "lock_owners.h"
#include "wait_duty.h"
#include "wait_hist.h"
#include "wait.skel.h"

namespace lockscope::probes::detail {

namespace {

using WaitSkel = SkelPtr<ls_wait, ls_wait__destroy>;

class WaitFamily final : public Family {
public:
    WaitFamily(WaitSkel skel, bpf_program* begin, bpf_program* end)
        : skel_(std::move(skel))
        , begin_(begin)
        , end_(end)
    {
    }

    // End first: a wait that began before its end could be seen would stay
    // pending and be taken for the next wait on that lock.
    void attach()
    {
        for (auto [p, links] : { std::pair { end_, &end_link_ }, std::pair { begin_, &begin_link_ } })
            if (!attachTo(p, *links)) {
                const std::string err = attachError();
                detach();
                throw std::runtime_error("attach failed: " + err);
            }
    }

    // Above cap waits a second, the programs attach for part of the time (wait_duty.h).
    void sampleAbove(double cap, const SharedMaps& maps)
    {
        WaitDuty::Hooks h;
        h.begin = [this](bool on) { return on ? attachTo(begin_, begin_link_) : (begin_link_.clear(), false); };
        h.end = [this](bool on) { return on ? attachTo(end_, end_link_) : (end_link_.clear(), false); };
        h.next_epoch = [this] { skel_->bss->attach_epoch = skel_->bss->attach_epoch + 1; };
        h.events = [&maps] { return maps.counter(LS_C_WAIT_BEGINS); };
        duty_ = std::make_unique<WaitDuty>(std::move(h), cap);
    }

    void read(Snapshot& out) const override
    {
        std::vector<RawWait> raw = readWaits(bpf_map__fd(skel_->maps.waits));
        if (skel_->rodata->holder_scan)
            out.holders = readHolders(bpf_map__fd(skel_->maps.holders));
        // Read while attached, these may be counted twice or not at all; the
        // capture's final read comes after detach, when they are exact.
        const std::vector<ls_wait_done> undrained = undrainedWaits(bpf_map__fd(skel_->maps.done));
        out.stats.events += addUndrained(undrained, raw, out.holders);
        const PendingCounts counted = addPendingCounts(pendingCounts(bpf_map__fd(skel_->maps.wait_counts)), raw);
        out.stats.events += counted.waits;
        out.stats.stacks_unsampled += counted.unsampled;
        if (skel_->rodata->owner_scan)
            out.owners = readOwners(ownerFds(), undrained, &owners_);
        if (skel_->rodata->lock_names)
            readNames(out);
        const UntimedWaits u = finishWaits(raw, out.waits);
        out.stats.waits_untimed += u.spread;
        countUnplaced(out.stats, u.unplaced);
    }

    // The histogram map, the holders (one generation with their waits) and
    // the owners (OwnerDrain): waits parked in the per-CPU rings and the
    // untimed counts cached per CPU reach them later (the next begin files
    // them), so a later drain takes them, never two.
    bool drainable() const override { return true; }
    void drain(Snapshot& out) override
    {
        const ClosedGeneration closed = closeWaitGeneration(&skel_->bss->wait_gen);
        std::vector<RawWait> raw = drainWaits(bpf_map__fd(skel_->maps.waits), closed);
        if (skel_->rodata->holder_scan)
            out.holders = drainHolders(bpf_map__fd(skel_->maps.holders), closed);
        if (skel_->rodata->lock_names)
            drainNames(out, raw);
        const size_t first = out.waits.size();
        const UntimedWaits u = finishWaits(raw, out.waits, &last_shapes_);
        out.stats.waits_untimed += u.spread;
        countUnplaced(out.stats, u.unplaced);
        if (skel_->rodata->owner_scan)
            drainOwners(out);
        if (duty_)
            scaleSampled(out, first);
    }

    uint64_t recursionMisses() const override
    {
        return detail::recursionMisses(begin_) + detail::recursionMisses(end_);
    }
    void detach() override
    {
        duty_.reset();
        begin_link_.clear();
        end_link_.clear();
        detached_ = true;
    }
    std::vector<int> progFds() const override { return { bpf_program__fd(begin_), bpf_program__fd(end_) }; }

private:
    static bool attachTo(bpf_program* p, Links& links)
    {
        if (links.empty())
            if (bpf_link* l = bpf_program__attach(p))
                links.add(l);
        return !links.empty();
    }

    // The waits this drain added, and their owners, scaled by the share of
    // the window contention_begin was attached.
    void scaleSampled(Snapshot& out, size_t first)
    {
        const double share = duty_->takeShare();
        out.wait_share = share;
        if (share >= 1)
            return;
        const std::span<LockRecord> mine(out.waits.begin() + std::ptrdiff_t(first), out.waits.end());
        auto untimed = [&mine] {
            uint64_t n = 0;
            for (const LockRecord& r : mine)
                n += r.untimed;
            return n;
        };
        const uint64_t before = untimed();
        scaleSampledWaits(mine, share, carry_);
        out.stats.waits_untimed += untimed() - before;
        scaleSampledOwners(out.owners, share, owners_carry_);
    }

    // After the waits: owners_ holds back those whose wait came too late for them.
    void drainOwners(Snapshot& out)
    {
        const uint64_t lostBefore = owners_.stacksLost();
        out.owners = owners_.drain(ownerFds(), &skel_->bss->owner_gen, undrainedWaits(bpf_map__fd(skel_->maps.done)));
        out.stats.stack_failures += owners_.stacksLost() - lostBefore;
        owners_.matchWaits(out.owners, out.waits, detached_);
    }

    OwnerMapFds ownerFds() const
    {
        return { bpf_map__fd(skel_->maps.owners), bpf_map__fd(skel_->maps.owner_stacks),
            bpf_map__fd(skel_->maps.owner_comms) };
    }

    // Addresses classified with no name are left out; keys, when given,
    // gets every address in the map.
    void readNames(Snapshot& out, std::vector<uint64_t>* keys = nullptr) const
    {
        const int fd = bpf_map__fd(skel_->maps.names);
        uint64_t key = 0, next = 0;
        ls_lock_name value {};
        const void* prev = nullptr;
        while (bpf_map_get_next_key(fd, prev, &next) == 0) {
            key = next;
            prev = &key;
            if (keys)
                keys->push_back(key);
            if (bpf_map_lookup_elem(fd, &key, &value) != 0 || value.name[0] == '\0')
                continue;
            out.lock_names[key] = std::string(value.name, strnlen(value.name, sizeof value.name));
        }
    }

    // Per window, the names of locks that had no wait in it: addresses of
    // short-lived processes' locks (their mm's mmap_lock, their siglock)
    // would otherwise fill the map. Names of busy locks stay, so the
    // programs do not name them again (and race the deletes) every window;
    // a name taken out is classified again at its lock's next timed begin.
    void drainNames(Snapshot& out, const std::vector<RawWait>& window)
    {
        std::vector<uint64_t> named;
        readNames(out, &named);
        std::set<uint64_t> busy;
        for (const RawWait& w : window)
            busy.insert(w.record.lock_addr);
        const int fd = bpf_map__fd(skel_->maps.names);
        for (uint64_t k : named)
            if (!busy.count(k))
                bpf_map_delete_elem(fd, &k);
    }

    WaitSkel skel_;
    bpf_program* begin_;
    bpf_program* end_;
    Links begin_link_;
    Links end_link_;
    bool detached_ = false;
    std::unique_ptr<WaitDuty> duty_; // only with Options::wait_rate_cap
    double carry_ = 0;               // scaleSampledWaits' fractions
    double owners_carry_ = 0;        // scaleSampledOwners'
    OwnerDrain owners_;
    LastShapes last_shapes_; // drained windows: each lock and flags' last timed shape
};

// Whether the wait programs may attach for part of the time (wait_duty.h):
// only for a reader that drains, and not with holder stacks (holders are
// not scaled: the scan needs every wait seen).
bool samplesWaits(const Options& o)
{
    return o.drain && o.wait_rate_cap && !o.holder_stacks;
}

// Slab cache names need the bpf_get_kmem_cache kfunc (6.13+), which only a
// BTF-typed hook can call; the other names work on every hook.
ProbeStatus lockNamesStatus(const std::string& hook, bool kfuncs)
{
    ProbeStatus st { "lock_names", "lock:contention_begin -> mmap_lock, siglock, rq_lock, slab cache", hook, true,
        "" };
    btf* vmlinux = btf__load_vmlinux_btf();
    const bool kmemCache = vmlinux && btf__find_by_name_kind(vmlinux, "bpf_get_kmem_cache", BTF_KIND_FUNC) > 0;
    btf__free(vmlinux);
    if (!kmemCache)
        st.reason = "no bpf_get_kmem_cache kfunc in this kernel: no slab cache names";
    else if (!kfuncs)
        st.reason = "slab cache names need the tp_btf hook (kfuncs): none on " + hook;
    else
        st.reason = "slab cache names via bpf_get_kmem_cache";
    return st;
}

} // namespace

std::unique_ptr<Family> openWait(FamilyContext& ctx)
{
    const Options& o = ctx.options;
    ProbeStatus st { "lock_contention", "lock:contention_begin,lock:contention_end", "", false, "" };
    if (o.wait == Backend::Off) {
        st.reason = kProbeDisabled;
        ctx.status.push_back(st);
        return nullptr;
    }
    const std::vector<Backend> order = hooksToTry(HookFamily::Wait, o.wait);
    if (order.empty()) {
        st.reason = std::string("backend ") + backendName(o.wait) + " cannot hook lock:contention_*";
        ctx.status.push_back(st);
        return nullptr;
    }

    std::string notes;
    for (Backend b : order) {
        const std::string hook = backendName(b);
        st.hook = hook;
        WaitSkel skel(ls_wait__open());
        if (!skel) {
            notes += (notes.empty() ? "" : "; ") + hook + ": open failed: " + errnoText(errno);
            continue;
        }
        configureRodata(skel->rodata, o);
        skel->rodata->holder_scan = o.holder_stacks;
        skel->rodata->owner_scan = o.lock_owner;
        skel->rodata->lock_names = o.lock_names;
        skel->rodata->count_begins = samplesWaits(o);
        configureStackBudget(skel->rodata, o);
        // Holder stacks add each wait's time to its holder's entry at the end.
        skel->rodata->time_window_events = o.holder_stacks ? 0 : stackWindowWalks(o.timing_budget);
        skel->rodata->exact_wait_ns = skel->rodata->time_window_events && o.exact_tail ? exactWaitNs() : 0;
        skel->rodata->holder_nr_cpus
            = static_cast<uint32_t>(std::min(ctx.maps.ncpus(), int { LS_HOLDER_MAX_CPUS }));
        auto& p = skel->progs;
        bpf_program* begin = b == Backend::TpBtf ? p.wait_begin_btf
            : b == Backend::RawTp                ? p.wait_begin_raw
                                                 : p.wait_begin_tp;
        bpf_program* end = b == Backend::TpBtf ? p.wait_end_btf
            : b == Backend::RawTp              ? p.wait_end_raw
                                               : p.wait_end_tp;
        for (bpf_program* prog : { p.wait_begin_btf, p.wait_end_btf, p.wait_begin_raw, p.wait_end_raw,
                 p.wait_begin_tp, p.wait_end_tp })
            bpf_program__set_autoload(prog, prog == begin || prog == end);
        if (int err = ctx.maps.reuseIn(skel->obj); err) {
            notes += (notes.empty() ? "" : "; ") + hook + ": map setup failed: " + errnoText(err);
            continue;
        }
        clearLibbpfLog();
        if (int err = ls_wait__load(skel.get()); err) {
            std::string why = lastLibbpfError();
            notes += (notes.empty() ? "" : "; ") + hook + ": load failed: " + errnoText(err)
                + (why.empty() ? "" : " [" + why + "]");
            continue;
        }
        auto family = std::make_unique<WaitFamily>(std::move(skel), begin, end);
        try {
            family->attach();
        } catch (const std::exception& e) {
            notes += (notes.empty() ? "" : "; ") + hook + ": " + e.what();
            continue;
        }
        if (samplesWaits(o))
            family->sampleAbove(double(o.wait_rate_cap) * ctx.maps.ncpus(), ctx.maps);
        st.attached = true;
        st.reason = notes.empty() ? "" : notes + "; fell back to " + hook;
        ctx.status.push_back(st);
        if (o.lock_owner)
            ctx.status.push_back(ProbeStatus { "lock_owner", "lock:contention_begin -> mutex/rwsem owner word", hook,
                true,
                b == Backend::TpBtf ? "mutexes and writer-owned rwsems; owner stacks via bpf_get_task_stack"
                                    : "owner stacks need tp_btf (kfuncs): owners named without their stacks" });
        if (o.lock_names)
            ctx.status.push_back(lockNamesStatus(hook, b == Backend::TpBtf));
        return family;
    }
    st.reason = notes;
    ctx.status.push_back(st);
    return nullptr;
}

} // namespace lockscope::probes::detail
