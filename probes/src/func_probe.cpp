// SPDX-License-Identifier: GPL-2.0-or-later
// Latency of the kernel functions that look up and lock IPC and timer objects,
// where they exist in the running kernel: fentry/fexit, else kprobe/kretprobe.
#include <cerrno>
#include <map>

#include <bpf/bpf.h>

#include "bpf_util.h"
#include "family.h"
#include "latency_halves.h"
#include "funcs.skel.h"

namespace lockscope::probes::detail {

namespace {

using FuncSkel = SkelPtr<ls_funcs, ls_funcs__destroy>;

constexpr const char* kFunctions[]
    = { "__lock_timer", "lock_timer", "ipc_lock", "ipc_lock_object", "ipc_obtain_object_check", "sem_lock" };
static_assert(std::size(kFunctions) <= LS_MAX_FUNCS);

struct Slot {
    std::string name;
    size_t slot;
    bool done = false;
    std::string notes;
    std::string hook;
};

std::pair<bpf_program*, bpf_program*> slotPrograms(ls_funcs* s, size_t i, bool kprobe)
{
    auto& p = s->progs;
    bpf_program* fentry[]
        = { p.fentry_0, p.fentry_1, p.fentry_2, p.fentry_3, p.fentry_4, p.fentry_5, p.fentry_6, p.fentry_7 };
    bpf_program* fexit[]
        = { p.fexit_0, p.fexit_1, p.fexit_2, p.fexit_3, p.fexit_4, p.fexit_5, p.fexit_6, p.fexit_7 };
    bpf_program* kp[]
        = { p.kprobe_0, p.kprobe_1, p.kprobe_2, p.kprobe_3, p.kprobe_4, p.kprobe_5, p.kprobe_6, p.kprobe_7 };
    bpf_program* kr[] = { p.kretprobe_0, p.kretprobe_1, p.kretprobe_2, p.kretprobe_3, p.kretprobe_4,
        p.kretprobe_5, p.kretprobe_6, p.kretprobe_7 };
    return kprobe ? std::pair { kp[i], kr[i] } : std::pair { fentry[i], fexit[i] };
}

class FuncFamily final : public Family {
public:
    struct Attached {
        std::string name;
        int lat_fd;
        uint32_t slot;
        volatile uint32_t* gen; // its skeleton's fn_gen
        std::vector<bpf_program*> progs;
    };

    explicit FuncFamily(bool drain) : drain_(drain) {}

    void keep(FuncSkel skel, std::unique_ptr<Links> links)
    {
        skels_.push_back(std::move(skel));
        links_.push_back(std::move(links));
    }
    void add(Attached a) { attached_.push_back(std::move(a)); }
    bool any() const { return !attached_.empty(); }

    void read(Snapshot& out) const override
    {
        for (const Attached& a : attached_)
            if (auto sum = readLatencySlot(a.lat_fd, a.slot, LS_MAX_FUNCS))
                addRecord(a, *sum, out);
    }

    bool drainable() const override { return drain_; }
    // Every skeleton's generation is closed before one wait for them all.
    void drain(Snapshot& out) override
    {
        if (!drain_)
            return;
        std::map<volatile uint32_t*, uint32_t> closed;
        for (const Attached& a : attached_)
            if (!closed.count(a.gen))
                closed[a.gen] = closeGeneration(a.gen);
        settleGenerations();
        for (const Attached& a : attached_)
            if (auto sum = takeLatencySlot(a.lat_fd, a.slot, LS_MAX_FUNCS, closed[a.gen]))
                addRecord(a, *sum, out);
    }

    uint64_t recursionMisses() const override
    {
        uint64_t n = 0;
        for (const Attached& a : attached_)
            for (const bpf_program* p : a.progs)
                n += detail::recursionMisses(p);
        return n;
    }
    void detach() override
    {
        for (auto& l : links_)
            l->clear();
    }
    std::vector<int> progFds() const override
    {
        std::vector<int> fds;
        for (const Attached& a : attached_)
            for (const bpf_program* p : a.progs)
                fds.push_back(bpf_program__fd(p));
        return fds;
    }

private:
    static void addRecord(const Attached& a, const ls_lat_val& sum, Snapshot& out)
    {
        LatencyRecord r;
        r.name = a.name;
        r.is_syscall = false;
        r.hist = histFromKernel(sum.hist);
        out.latencies.push_back(std::move(r));
    }

    std::vector<FuncSkel> skels_;
    std::vector<std::unique_ptr<Links>> links_;
    std::vector<Attached> attached_;
    bool drain_; // fn_halves set: read out per window
};

void note(Slot& s, const std::string& hook, const std::string& why)
{
    s.notes += (s.notes.empty() ? "" : "; ") + hook + ": " + why;
    s.hook = hook;
}

// One backend over every slot not attached yet.
void tryBackend(FamilyContext& ctx, FuncFamily& family, std::vector<Slot>& slots, bool kprobe)
{
    const std::string hook = kprobe ? "kprobe" : "fentry";
    std::vector<Slot*> todo;
    for (Slot& s : slots) {
        if (s.done)
            continue;
        std::string why;
        kernelHasFunction(s.name, &why);
        if (!kprobe && !why.empty()) { // in kallsyms only: no BTF, no fentry
            note(s, hook, "no BTF for the function");
            continue;
        }
        todo.push_back(&s);
    }
    if (todo.empty())
        return;
    if (kprobe) {
        if (std::string why = kprobeUnavailableReason(); !why.empty()) {
            for (Slot* s : todo)
                s->notes += (s->notes.empty() ? "" : "; ") + hook + ": " + why; // not tried: hook stays
            return;
        }
    }
    FuncSkel skel(ls_funcs__open());
    if (!skel) {
        for (Slot* s : todo)
            note(*s, hook, "open failed: " + errnoText(errno));
        return;
    }
    configureRodata(skel->rodata, ctx.options);
    skel->rodata->fn_halves = ctx.options.drain;
    bpf_program* prog = nullptr;
    while ((prog = bpf_object__next_program(skel->obj, prog)))
        bpf_program__set_autoload(prog, false);
    for (Slot* s : todo) {
        auto [entry, exit] = slotPrograms(skel.get(), s->slot, kprobe);
        bpf_program__set_autoload(entry, true);
        bpf_program__set_autoload(exit, true);
        if (!kprobe) {
            bpf_program__set_attach_target(entry, 0, s->name.c_str());
            bpf_program__set_attach_target(exit, 0, s->name.c_str());
        }
    }
    if (int err = ctx.maps.reuseIn(skel->obj); err) {
        for (Slot* s : todo)
            note(*s, hook, "map setup failed: " + errnoText(err));
        return;
    }
    clearLibbpfLog();
    if (int err = ls_funcs__load(skel.get()); err) {
        const std::string why = "load failed: " + errnoText(err);
        for (Slot* s : todo)
            note(*s, hook, why);
        return;
    }
    const int lat_fd = bpf_map__fd(skel->maps.fn_lat);
    auto links = std::make_unique<Links>();
    bool kept = false;
    for (Slot* s : todo) {
        auto [entry, exit] = slotPrograms(skel.get(), s->slot, kprobe);
        bpf_link* a
            = kprobe ? bpf_program__attach_kprobe(entry, false, s->name.c_str()) : bpf_program__attach(entry);
        if (!a) {
            note(*s, hook, "attach failed: " + attachError());
            continue;
        }
        bpf_link* b
            = kprobe ? bpf_program__attach_kprobe(exit, true, s->name.c_str()) : bpf_program__attach(exit);
        if (!b) {
            note(*s, hook, "attach failed: " + attachError());
            bpf_link__destroy(a);
            continue;
        }
        links->add(a);
        links->add(b);
        s->done = true;
        s->hook = kprobe ? "kprobe" : "fentry";
        family.add({ s->name, lat_fd, static_cast<uint32_t>(s->slot), &skel->bss->fn_gen, { entry, exit } });
        kept = true;
    }
    if (kept)
        family.keep(std::move(skel), std::move(links));
}

} // namespace

std::unique_ptr<Family> openFunctions(FamilyContext& ctx)
{
    const Backend b = ctx.options.functions;
    if (b == Backend::Off) {
        ctx.status.push_back({ "functions", "__lock_timer,ipc_lock,...", "", false, kProbeDisabled });
        return nullptr;
    }
    std::vector<Slot> slots;
    for (size_t i = 0; i < std::size(kFunctions); ++i) {
        std::string why;
        if (kernelHasFunction(kFunctions[i], &why))
            slots.push_back({ kFunctions[i], i, false, "", "" });
        else
            ctx.status.push_back({ std::string("function:") + kFunctions[i], kFunctions[i], "", false, why });
    }
    auto family = std::make_unique<FuncFamily>(ctx.options.drain);
    if (b == Backend::Auto || b == Backend::Fentry)
        tryBackend(ctx, *family, slots, false);
    if (b == Backend::Auto || b == Backend::Kprobe)
        tryBackend(ctx, *family, slots, true);
    for (Slot& s : slots) {
        if (b != Backend::Auto && b != Backend::Fentry && b != Backend::Kprobe)
            s.notes = std::string("backend ") + backendName(b) + " cannot hook kernel functions";
        ctx.status.push_back({ "function:" + s.name, s.name, s.hook, s.done, s.notes });
    }
    if (!family->any())
        return nullptr;
    return family;
}

} // namespace lockscope::probes::detail
