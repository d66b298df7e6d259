// SPDX-License-Identifier: GPL-2.0-or-later
// Spinlock hold time: fentry/fexit, else kprobe/kretprobe. Each backend is its
// own skeleton, so a refused backend never breaks loading another family.
#include <algorithm>
#include <cerrno>
#include <map>
#include <tuple>
#include <utility>

#include <bpf/bpf.h>
#include <unistd.h>

#include "bpf_util.h"
#include "family.h"
#include "hold_fentry.skel.h"
#include "hold_kprobe.skel.h"

namespace lockscope::probes::detail {

namespace {

struct ProgTarget {
    bpf_program* prog;
    const char* function;
    bool unlock;
};

class HoldFamily final : public Family {
public:
    // gen: the programs' hold_gen (mmapped .bss) when the tables have two
    // halves (Options::drain), else null.
    struct DrainState {
        volatile uint32_t* gen = nullptr;    // hold_gen
        volatile uint32_t* paused = nullptr; // hold_walks_paused
        const SharedMaps* maps = nullptr;
    };

    HoldFamily(std::shared_ptr<void> owner, int table_fd, int acquire_fd, std::vector<bpf_program*> progs,
        int ncpus, DrainState drain)
        : owner_(std::move(owner))
        , table_fd_(table_fd)
        , acquire_fd_(acquire_fd)
        , progs_(std::move(progs))
        , ncpus_(ncpus)
        , gen_(drain.gen)
        , paused_(drain.paused)
        , maps_(drain.maps)
    {
    }

    Links& links() { return links_; }

    void read(Snapshot& out) const override
    {
        const uint32_t halves = gen_ ? 2 : 1;
        readTable(table_fd_, 0, halves * LS_HOLD_TABLE, out.holds);
        readTable(acquire_fd_, 0, halves * LS_ACQUIRE_TABLE, out.acquires);
    }

    bool drainable() const override { return gen_ != nullptr; }
    // The half the programs filled until now is read and cleared once they
    // have moved to the other (lock_owners.h does the same by generation).
    void drain(Snapshot& out) override
    {
        if (!gen_)
            return;
        const bool forget = !forget_.empty();
        if (forget)
            __atomic_store_n(paused_, 1u, __ATOMIC_SEQ_CST);
        const uint32_t closed = closeGeneration(gen_);
        settleGenerations();
        for (int64_t id : forget_)
            maps_->forgetStack(id);
        forget_.clear();
        if (forget)
            __atomic_store_n(paused_, 0u, __ATOMIC_SEQ_CST);
        readTable(table_fd_, closed * LS_HOLD_TABLE, LS_HOLD_TABLE, out.holds, true);
        readTable(acquire_fd_, closed * LS_ACQUIRE_TABLE, LS_ACQUIRE_TABLE, out.acquires, true);
    }

    // Hold stacks are deleted by the next drain, with the walks paused; so
    // are spilled ones, whatever their family: a hold walk can spill too.
    bool deferForget(int64_t id) const override
    {
        const uint64_t tag = static_cast<uint64_t>(id) >> LS_STACK_TAG_SHIFT;
        if (!gen_ || id < 0 || (tag != LS_STACKS_HOLD && tag != LS_STACKS_SPILL))
            return false;
        forget_.push_back(id);
        return true;
    }

    // Slots [begin, begin + size) of one per-CPU slot table (holds, or slow
    // acquisitions), the CPUs summed; clear: the filled ones are zeroed after.
    void readTable(int fd, uint32_t begin, uint32_t size, std::vector<LockRecord>& records, bool clear = false) const
    {
        std::vector<ls_hold_slot> slots(static_cast<size_t>(ncpus_));
        const std::vector<ls_hold_slot> empty(static_cast<size_t>(ncpus_));
        std::map<std::tuple<uint64_t, uint32_t, uint64_t>, LockRecord> merged; // key, variant, cgroup
        for (uint32_t idx = begin; idx < begin + size; ++idx) {
            if (bpf_map_lookup_elem(fd, &idx, slots.data()) != 0)
                continue;
            if (clear && std::any_of(slots.begin(), slots.end(), [](const ls_hold_slot& s) { return s.key != 0; }))
                bpf_map_update_elem(fd, &idx, empty.data(), BPF_ANY);
            for (const ls_hold_slot& s : slots) {
                if (s.key == 0)
                    continue;
                LockRecord& r = merged[{ s.key, s.variant, s.cgroup }];
                r.lock_addr = (s.key & 0xffffffffffffULL) | 0xffff000000000000ULL;
                r.kstack_id = stackOfHoldSid(static_cast<uint16_t>(s.key >> 48));
                r.flags = s.variant;
                r.cgroup = s.cgroup;
                r.type = "spinlock";
                r.hist.merge(histFromKernel(s.hist));
            }
        }
        for (auto& [key, r] : merged)
            if (!r.hist.empty())
                records.push_back(std::move(r));
    }

    uint64_t recursionMisses() const override
    {
        uint64_t n = 0;
        for (const bpf_program* p : progs_)
            n += detail::recursionMisses(p);
        return n;
    }
    void detach() override { links_.clear(); }
    std::vector<int> progFds() const override
    {
        std::vector<int> fds;
        for (const bpf_program* p : progs_)
            fds.push_back(bpf_program__fd(p));
        return fds;
    }

private:
    std::shared_ptr<void> owner_;
    int table_fd_;
    int acquire_fd_;
    std::vector<bpf_program*> progs_;
    int ncpus_;
    volatile uint32_t* gen_;
    volatile uint32_t* paused_;
    const SharedMaps* maps_;
    mutable std::vector<int64_t> forget_; // hold stack ids the next drain deletes
    Links links_;
};

// Loads and attaches one backend's skeleton. Returns nullptr and appends to
// notes when it cannot.
template <class Skel>
std::unique_ptr<Family> tryBackend(FamilyContext& ctx, const char* hook, Skel* raw, void (*destroy)(Skel*),
    const std::vector<ProgTarget>& targets, std::string& notes)
{
    std::shared_ptr<void> owner(raw, [destroy](void* p) { destroy(static_cast<Skel*>(p)); });
    auto fail = [&](const std::string& why) {
        notes += (notes.empty() ? "" : "; ") + std::string(hook) + ": " + why;
        return nullptr;
    };
    configureRodata(raw->rodata, ctx.options);
    // A holder found by the wait probe must be in held: every acquisition counts.
    raw->rodata->hold_sample = ctx.options.holder_stacks ? 1u : std::max(ctx.options.hold_sample, 1u);
    raw->rodata->holder_track = ctx.options.holder_stacks;
    raw->rodata->acquire_min_ns = ctx.options.acquire_min_ns;
    raw->rodata->hold_halves = ctx.options.drain;
    if (ctx.options.drain
        && (bpf_map__set_max_entries(raw->maps.hold_table, 2 * LS_HOLD_TABLE) != 0
            || bpf_map__set_max_entries(raw->maps.acquire_table, 2 * LS_ACQUIRE_TABLE) != 0))
        return fail("cannot size the hold tables for draining");
    configureStackBudget(raw->rodata, ctx.options);
    std::vector<bpf_program*> used;
    std::string missing;
    bool have_lock = false, have_unlock = false;
    for (const ProgTarget& t : targets) {
        std::string why;
        const bool present = kernelHasFunction(t.function, &why)
            && (std::string(hook) != "fentry" || why.empty()); // fentry needs BTF
        bpf_program__set_autoload(t.prog, present);
        if (!present) {
            missing += (missing.empty() ? "" : ", ") + std::string(t.function);
            continue;
        }
        used.push_back(t.prog);
        (t.unlock ? have_unlock : have_lock) = true;
    }
    if (!have_lock || !have_unlock)
        return fail("no traceable spin lock/unlock functions in this kernel (" + missing + ")");
    if (int err = useStackMap(raw, ctx.maps, LS_STACKS_HOLD); err)
        return fail("map setup failed: " + errnoText(err));
    clearLibbpfLog();
    // The skeleton load maps .bss (hold_gen, hold_walks_paused) into raw->bss.
    if (int err = bpf_object__load_skeleton(raw->skeleton); err) {
        std::string log = lastLibbpfError();
        if (log.rfind("failed to load object", 0) == 0)
            log.clear(); // says nothing errno does not
        return fail("load failed: " + errnoText(err) + (log.empty() ? "" : " [" + log + "]"));
    }
    auto family
        = std::make_unique<HoldFamily>(owner, bpf_map__fd(raw->maps.hold_table),
            bpf_map__fd(raw->maps.acquire_table), used, ctx.maps.ncpus(),
            ctx.options.drain ? HoldFamily::DrainState { &raw->bss->hold_gen, &raw->bss->hold_walks_paused, &ctx.maps }
                              : HoldFamily::DrainState {});
    for (bpf_program* p : used) {
        bpf_link* l = bpf_program__attach(p);
        if (!l)
            return fail("attach failed: " + attachError());
        family->links().add(l);
    }
    if (!missing.empty())
        notes += (notes.empty() ? "" : "; ") + std::string("not in this kernel: ") + missing;
    return family;
}

} // namespace

std::unique_ptr<Family> openHold(FamilyContext& ctx)
{
    const Options& o = ctx.options;
    ProbeStatus st { "spin_hold", "_raw_spin_lock*,_raw_spin_trylock*,_raw_spin_unlock*", "", false, "" };
    if (o.hold == Backend::Off) {
        st.reason = kProbeDisabled;
        ctx.status.push_back(st);
        return nullptr;
    }
    if (hooksToTry(HookFamily::Hold, o.hold).empty()) {
        st.reason = std::string("backend ") + backendName(o.hold) + " cannot hook spin lock functions";
        ctx.status.push_back(st);
        return nullptr;
    }
    std::string notes;
    if (o.hold == Backend::Auto || o.hold == Backend::Fentry) {
        st.hook = "fentry";
        if (ls_hold_fentry* s = ls_hold_fentry__open()) {
            auto& p = s->progs;
            std::vector<ProgTarget> t = {
                { p.enter_lock, "_raw_spin_lock", false },
                { p.enter_lock_irq, "_raw_spin_lock_irq", false },
                { p.enter_lock_irqsave, "_raw_spin_lock_irqsave", false },
                { p.enter_lock_bh, "_raw_spin_lock_bh", false },
                { p.hold_lock, "_raw_spin_lock", false },
                { p.hold_lock_irq, "_raw_spin_lock_irq", false },
                { p.hold_lock_irqsave, "_raw_spin_lock_irqsave", false },
                { p.hold_lock_bh, "_raw_spin_lock_bh", false },
                { p.hold_trylock, "_raw_spin_trylock", false },
                { p.hold_trylock_bh, "_raw_spin_trylock_bh", false },
                { p.hold_unlock, "_raw_spin_unlock", true },
                { p.hold_unlock_irq, "_raw_spin_unlock_irq", true },
                { p.hold_unlock_irqrestore, "_raw_spin_unlock_irqrestore", true },
                { p.hold_unlock_bh, "_raw_spin_unlock_bh", true },
            };
            if (auto f = tryBackend(ctx, "fentry", s, ls_hold_fentry__destroy, t, notes)) {
                st.attached = true;
                st.reason = notes;
                ctx.status.push_back(st);
                return f;
            }
        } else {
            notes += "fentry: open failed: " + errnoText(errno);
        }
    }
    if (o.hold == Backend::Auto || o.hold == Backend::Kprobe) {
        if (std::string why = kprobeUnavailableReason(); !why.empty()) {
            notes += (notes.empty() ? "" : "; ") + std::string("kprobe: ") + why;
        } else if (ls_hold_kprobe* s = ls_hold_kprobe__open()) {
            st.hook = "kprobe";
            auto& p = s->progs;
            std::vector<ProgTarget> t = {
                { p.enter__raw_spin_lock, "_raw_spin_lock", false },
                { p.exit__raw_spin_lock, "_raw_spin_lock", false },
                { p.enter__raw_spin_lock_irq, "_raw_spin_lock_irq", false },
                { p.exit__raw_spin_lock_irq, "_raw_spin_lock_irq", false },
                { p.enter__raw_spin_lock_irqsave, "_raw_spin_lock_irqsave", false },
                { p.exit__raw_spin_lock_irqsave, "_raw_spin_lock_irqsave", false },
                { p.enter__raw_spin_lock_bh, "_raw_spin_lock_bh", false },
                { p.exit__raw_spin_lock_bh, "_raw_spin_lock_bh", false },
                { p.enter__raw_spin_trylock, "_raw_spin_trylock", false },
                { p.exit__raw_spin_trylock, "_raw_spin_trylock", false },
                { p.enter__raw_spin_trylock_bh, "_raw_spin_trylock_bh", false },
                { p.exit__raw_spin_trylock_bh, "_raw_spin_trylock_bh", false },
                { p.enter__raw_spin_unlock, "_raw_spin_unlock", true },
                { p.enter__raw_spin_unlock_irq, "_raw_spin_unlock_irq", true },
                { p.enter__raw_spin_unlock_irqrestore, "_raw_spin_unlock_irqrestore", true },
                { p.enter__raw_spin_unlock_bh, "_raw_spin_unlock_bh", true },
            };
            if (auto f = tryBackend(ctx, "kprobe", s, ls_hold_kprobe__destroy, t, notes)) {
                st.attached = true;
                st.reason = notes;
                ctx.status.push_back(st);
                return f;
            }
        } else {
            notes += (notes.empty() ? "" : "; ") + std::string("kprobe: open failed: ") + errnoText(errno);
        }
    }
    st.reason = notes;
    ctx.status.push_back(st);
    return nullptr;
}

} // namespace lockscope::probes::detail
