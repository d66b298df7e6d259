// SPDX-License-Identifier: GPL-2.0-or-later
// IPC and POSIX-timer syscall latency: fentry/fexit on the syscall functions, else raw_syscalls
// via raw_tp, else the syscalls:sys_enter_/sys_exit_ tracepoints.
#include <algorithm>
#include <cerrno>
#include <vector>

#include <sys/syscall.h>

#include <bpf/bpf.h>

#include "bpf_util.h"
#include "family.h"
#include "latency_halves.h"
#include "syscalls.skel.h"
#include "untimed_hist.h"

namespace lockscope::probes::detail {

namespace {

using SyscallSkel = SkelPtr<ls_syscalls, ls_syscalls__destroy>;

// Under a timing budget count has every call and the slots the timed ones;
// every call is given the distribution of the timed calls weighted by the
// calls each stands for (syscalls.bpf.c), keeping the exact count and the
// timed calls' min and max. A drained window whose calls all went untimed
// takes the shape syscall idx had in the last window that timed some
// (`last`, updated here, null when not drained).
struct Untimed {
    uint64_t calls = 0; // calls that were not timed
    bool placed = false; // given times: in the histogram, not lost
};

Untimed estimateUntimed(ls_lat_val& v, LastShapes* last, size_t idx)
{
    const LastShapes::Key key { idx, 0 };
    const ls_hist* before = nullptr;
    const uint64_t timed = timedCount(v.hist);
    const uint64_t untimed = v.hist.count > timed ? v.hist.count - timed : 0;
    ls_hist like = v.weighted;
    like.min = v.hist.min;
    like.max = v.hist.max;
    if (timed && timedCount(v.weighted)) {
        if (last)
            last->remember(key, like);
    } else if (!timed && last && (before = last->find(key))) {
        like = *before;
    } else {
        return { untimed, timed > 0 };
    }
    if (!untimed)
        return { 0, true };
    ls_hist all {};
    all.count = v.hist.count;
    spreadUntimed(all, v.hist.count, like);
    v.hist = all;
    return { untimed, true };
}

// Index i matches SYSCALL_PAIR(name, i) in syscalls.bpf.c.
constexpr const char* kSyscalls[] = { "semtimedop", "semop", "semget", "msgget", "shmget", "timer_gettime",
    "timer_settime", "timer_getoverrun", "timer_delete" };

// Native syscall numbers, index as kSyscalls; -1 where this architecture lacks one.
constexpr long kNumbers[] = {
#ifdef SYS_semtimedop
    SYS_semtimedop,
#else
    -1,
#endif
#ifdef SYS_semop
    SYS_semop,
#else
    -1,
#endif
    SYS_semget, SYS_msgget, SYS_shmget, SYS_timer_gettime, SYS_timer_settime, SYS_timer_getoverrun,
    SYS_timer_delete };
static_assert(std::size(kNumbers) == std::size(kSyscalls));
// Syscall numbers the raw_tp filter table covers.
constexpr long kNrMax = static_cast<long>(sizeof(ls_syscalls::ls_syscalls__rodata::sc_of_nr));

// The hooks this family has: Backend::Fentry, RawTp or Tracepoint.
using Hook = Backend;

// The function behind a syscall on this architecture ("__x64_sys_semtimedop"),
// or empty when BTF has none (fentry needs BTF).
std::string syscallFunction(const char* name)
{
    for (const char* prefix :
        { "__x64_sys_", "__arm64_sys_", "__riscv_sys_", "__s390x_sys_", "__powerpc_sys_", "sys_" }) {
        const std::string fn = std::string(prefix) + name;
        if (btfHasFunction(fn))
            return fn;
    }
    return {};
}

class SyscallFamily final : public Family {
public:
    SyscallFamily(SyscallSkel skel, uint32_t sample, bool budgeted)
        : skel_(std::move(skel))
        , sample_(sample)
        , budgeted_(budgeted)
    {
    }

    static std::pair<bpf_program*, bpf_program*> programs(ls_syscalls* skel, size_t idx, Hook hook)
    {
        auto& p = skel->progs;
        bpf_program* fentry[][2] = {
            { p.fentry_0, p.fexit_0 },
            { p.fentry_1, p.fexit_1 },
            { p.fentry_2, p.fexit_2 },
            { p.fentry_3, p.fexit_3 },
            { p.fentry_4, p.fexit_4 },
            { p.fentry_5, p.fexit_5 },
            { p.fentry_6, p.fexit_6 },
            { p.fentry_7, p.fexit_7 },
            { p.fentry_8, p.fexit_8 },
        };
        bpf_program* tracepoint[][2] = {
            { p.enter_semtimedop, p.exit_semtimedop },
            { p.enter_semop, p.exit_semop },
            { p.enter_semget, p.exit_semget },
            { p.enter_msgget, p.exit_msgget },
            { p.enter_shmget, p.exit_shmget },
            { p.enter_timer_gettime, p.exit_timer_gettime },
            { p.enter_timer_settime, p.exit_timer_settime },
            { p.enter_timer_getoverrun, p.exit_timer_getoverrun },
            { p.enter_timer_delete, p.exit_timer_delete },
        };
        static_assert(std::size(fentry) == std::size(kSyscalls) && std::size(tracepoint) == std::size(kSyscalls));
        if (hook == Hook::RawTp)
            return { p.raw_enter, p.raw_exit };
        auto& row = hook == Hook::Fentry ? fentry[idx] : tracepoint[idx];
        return { row[0], row[1] };
    }

    // Attaches an enter/exit pair; empty on success, else why.
    std::string attachPair(std::pair<bpf_program*, bpf_program*> pair)
    {
        bpf_link* enter = bpf_program__attach(pair.first);
        if (!enter)
            return "attach failed: " + attachError();
        bpf_link* exit = bpf_program__attach(pair.second);
        if (!exit) {
            const std::string err = attachError();
            bpf_link__destroy(enter);
            return "attach failed: " + err;
        }
        links_.add(enter);
        links_.add(exit);
        return {};
    }

    ls_syscalls* skel() const { return skel_.get(); }
    void attached(size_t idx) { attached_.push_back(idx); }

    void read(Snapshot& out) const override
    {
        const int fd = bpf_map__fd(skel_->maps.sc_lat);
        for (size_t idx : attached_)
            if (auto sum = readLatencySlot(fd, static_cast<uint32_t>(idx), LS_MAX_SYSCALLS))
                addRecord(idx, *sum, nullptr, out);
    }

    bool drainable() const override { return skel_->rodata->sc_halves; }
    void drain(Snapshot& out) override
    {
        if (!drainable())
            return;
        const uint32_t closed = closeGeneration(&skel_->bss->sc_gen);
        settleGenerations();
        const int fd = bpf_map__fd(skel_->maps.sc_lat);
        for (size_t idx : attached_)
            if (auto sum = takeLatencySlot(fd, static_cast<uint32_t>(idx), LS_MAX_SYSCALLS, closed))
                addRecord(idx, *sum, &last_shapes_, out);
        last_shapes_.endWindow();
    }

    uint64_t recursionMisses() const override { return 0; } // runs at most once per syscall per thread
    void detach() override { links_.clear(); }
    std::vector<int> progFds() const override
    {
        std::vector<int> fds;
        bpf_program* p = nullptr;
        while ((p = bpf_object__next_program(skel_->obj, p)))
            if (bpf_program__fd(p) >= 0)
                fds.push_back(bpf_program__fd(p));
        return fds;
    }
    bool any() const { return !attached_.empty(); }

private:
    // Syscall idx's calls, CPUs and halves summed, as a record; `last` as
    // estimateUntimed's.
    void addRecord(size_t idx, ls_lat_val sum, LastShapes* last, Snapshot& out) const
    {
        LatencyRecord r;
        r.name = kSyscalls[idx];
        r.is_syscall = true;
        if (budgeted_) {
            // None timed yet to take times from (read mid-call): left out.
            const Untimed u = estimateUntimed(sum, last, idx);
            if (u.placed)
                out.stats.syscalls_untimed += u.calls;
            else
                countUnplaced(out.stats, u.calls);
        }
        r.hist = histFromKernel(sum.hist);
        r.errors = sum.errors;
        r.sample_period = sample_;
        // A read while attached can see a call timed on one CPU before its
        // count on another: never fewer calls than timed ones.
        r.all_calls = sample_ > 1 ? std::max<uint64_t>(sum.calls, r.hist.count()) : 0;
        out.latencies.push_back(std::move(r));
    }

    SyscallSkel skel_;
    uint32_t sample_;
    bool budgeted_; // timing budget on: count has untimed calls beside the timed ones
    Links links_;
    std::vector<size_t> attached_;
    LastShapes last_shapes_; // by syscall index
};

bool nativeNumber(size_t idx) { return kNumbers[idx] >= 0 && kNumbers[idx] < kNrMax; }

// Opens and loads the skeleton with only `hook`'s programs. Null and *why set
// when the kernel refuses; `functions` (fentry) gives each syscall's target,
// empty where BTF has none.
std::unique_ptr<SyscallFamily> loadHook(
    FamilyContext& ctx, Hook hook, const std::vector<std::string>& functions, std::string* why)
{
    SyscallSkel skel(ls_syscalls__open());
    if (!skel) {
        *why = "open failed: " + errnoText(errno);
        return nullptr;
    }
    configureRodata(skel->rodata, ctx.options);
    skel->rodata->sc_halves = ctx.options.drain;
    skel->rodata->sc_sample = std::max<uint32_t>(1, ctx.options.syscall_sample);
    skel->rodata->time_window_events
        = skel->rodata->sc_sample > 1 ? 0 : stackWindowWalks(ctx.options.syscall_budget);
    for (size_t i = 0; i < std::size(kSyscalls); ++i)
        if (nativeNumber(i))
            skel->rodata->sc_of_nr[kNumbers[i]] = static_cast<uint8_t>(i + 1);
    bpf_program* p = nullptr;
    while ((p = bpf_object__next_program(skel->obj, p)))
        bpf_program__set_autoload(p, false);
    for (size_t i = 0; i < std::size(kSyscalls); ++i) {
        if (hook == Hook::Fentry && functions[i].empty())
            continue;
        auto [enter, exit] = SyscallFamily::programs(skel.get(), i, hook);
        bpf_program__set_autoload(enter, true);
        bpf_program__set_autoload(exit, true);
        if (hook == Hook::Fentry) {
            bpf_program__set_attach_target(enter, 0, functions[i].c_str());
            bpf_program__set_attach_target(exit, 0, functions[i].c_str());
        }
    }
    if (int err = ctx.maps.reuseIn(skel->obj); err) {
        *why = "map setup failed: " + errnoText(err);
        return nullptr;
    }
    clearLibbpfLog();
    if (int err = ls_syscalls__load(skel.get()); err) {
        std::string log = lastLibbpfError();
        if (log.rfind("failed to load", 0) == 0)
            log.clear(); // says nothing errno does not
        *why = "load failed: " + errnoText(err) + (log.empty() ? "" : " [" + log + "]");
        return nullptr;
    }
    const uint32_t sample = skel->rodata->sc_sample;
    const bool budgeted = skel->rodata->time_window_events != 0;
    return std::make_unique<SyscallFamily>(std::move(skel), sample, budgeted);
}

std::string target(Hook hook, size_t idx, const std::vector<std::string>& functions)
{
    const std::string name = kSyscalls[idx];
    switch (hook) {
    case Hook::Fentry:
        return functions[idx];
    case Hook::RawTp:
        return nativeNumber(idx) ? "raw_syscalls:sys_enter,sys_exit nr " + std::to_string(kNumbers[idx]) : "";
    case Hook::Tracepoint:
        return "syscalls:sys_enter_" + name + ",sys_exit_" + name;
    default:
        return {};
    }
}

// Per syscall: attached yet, and why each hook tried so far was not used
// (carried into the status of the hook that is).
struct Attempts {
    std::vector<std::string> notes = std::vector<std::string>(std::size(kSyscalls));
    std::vector<bool> done = std::vector<bool>(std::size(kSyscalls), false);

    void note(size_t i, Hook hook, const std::string& why)
    {
        notes[i] += (notes[i].empty() ? "" : "; ") + std::string(backendName(hook)) + ": " + why;
    }
    void noteAll(Hook hook, const std::string& why)
    {
        for (size_t i = 0; i < std::size(kSyscalls); ++i)
            note(i, hook, why);
    }
};

// raw_tp: one pair of programs on raw_syscalls serves every syscall this
// architecture numbers.
void attachRawTp(SyscallFamily& family, Attempts& a)
{
    if (auto why = family.attachPair(SyscallFamily::programs(family.skel(), 0, Hook::RawTp)); !why.empty()) {
        a.noteAll(Hook::RawTp, why);
        return;
    }
    for (size_t i = 0; i < std::size(kSyscalls); ++i) {
        if (nativeNumber(i)) {
            family.attached(i);
            a.done[i] = true;
        } else {
            a.note(i, Hook::RawTp, "no such syscall on this architecture");
        }
    }
}

// fentry and tracepoints: a pair of programs per syscall.
void attachEach(SyscallFamily& family, Hook hook, const std::vector<std::string>& functions, Attempts& a)
{
    for (size_t i = 0; i < std::size(kSyscalls); ++i) {
        if (hook == Hook::Fentry && functions[i].empty())
            continue;
        auto why = family.attachPair(SyscallFamily::programs(family.skel(), i, hook));
        if (why.empty()) {
            family.attached(i);
            a.done[i] = true;
            continue;
        }
        if (hook == Hook::Tracepoint && errno == ENOENT)
            why = "no tracepoint syscalls:sys_enter_" + std::string(kSyscalls[i]) +
                " in this kernel (CONFIG_FTRACE_SYSCALLS off?)";
        a.note(i, hook, why);
    }
}

// What an attached syscall's status says of the sampling; "" when every call is timed.
std::string samplingNote(const Options& o)
{
    const uint32_t sample = std::max<uint32_t>(1, o.syscall_sample);
    if (sample > 1)
        return "timing 1 in " + std::to_string(sample) + " calls per thread";
    if (o.syscall_budget)
        return "timing at most " + std::to_string(o.syscall_budget) + " calls/s per CPU, counting every one";
    return {};
}

void pushStatus(FamilyContext& ctx, Hook hook, const std::vector<std::string>& functions, const Attempts& a,
                const std::string& sampled)
{
    for (size_t i = 0; i < std::size(kSyscalls); ++i) {
        std::string note = a.notes[i];
        if (a.done[i] && !sampled.empty())
            note += (note.empty() ? "" : "; ") + sampled;
        ctx.status.push_back({ std::string("syscall:") + kSyscalls[i], target(hook, i, functions),
            backendName(hook), a.done[i], note });
    }
}

} // namespace

std::unique_ptr<Family> openSyscalls(FamilyContext& ctx)
{
    if (!ctx.options.syscalls) {
        ctx.status.push_back({ "syscalls", "IPC and timer syscalls", "", false, kProbeDisabled });
        return nullptr;
    }
    const std::vector<Hook> hooks = hooksToTry(HookFamily::Syscalls, ctx.options.syscall_backend);
    if (hooks.empty()) {
        ctx.status.push_back({ "syscalls", "IPC and timer syscalls", "", false,
            std::string("backend ") + backendName(ctx.options.syscall_backend)
                + " is not one of auto, fentry, raw_tp, tracepoint" });
        return nullptr;
    }
    std::vector<std::string> functions;
    for (const char* name : kSyscalls)
        functions.push_back(syscallFunction(name));
    Attempts a;
    for (Hook hook : hooks) {
        if (hook == Hook::Fentry) {
            for (size_t i = 0; i < std::size(kSyscalls); ++i)
                if (functions[i].empty())
                    a.note(i, hook, "no function for it in BTF");
            if (std::all_of(functions.begin(), functions.end(), [](const std::string& f) { return f.empty(); }))
                continue;
        }
        std::string why;
        auto family = loadHook(ctx, hook, functions, &why);
        if (!family) {
            for (size_t i = 0; i < std::size(kSyscalls); ++i)
                if (hook != Hook::Fentry || !functions[i].empty())
                    a.note(i, hook, why);
            continue;
        }
        if (hook == Hook::RawTp)
            attachRawTp(*family, a);
        else
            attachEach(*family, hook, functions, a);
        // One hook for all: mixing them would time some calls twice over a
        // later fallback, and one backend per probe is what the status says.
        if (family->any()) {
            pushStatus(ctx, hook, functions, a, samplingNote(ctx.options));
            return family;
        }
    }
    pushStatus(ctx, hooks.back(), functions, a, {});
    return nullptr;
}

} // namespace lockscope::probes::detail
