// SPDX-License-Identifier: GPL-2.0-or-later
// IPC and POSIX-timer syscall latency from the syscalls:sys_enter_/sys_exit_ tracepoints.
#include <algorithm>
#include <cerrno>
#include <vector>

#include <sys/syscall.h>

#include <bpf/bpf.h>

#include "bpf_util.h"
#include "family.h"
#include "syscalls.skel.h"

namespace lockscope::probes::detail {

namespace {

using SyscallSkel = SkelPtr<ls_syscalls, ls_syscalls__destroy>;

// The kernel keeps one histogram per CPU (no shared cache line on the hot path);
// a CPU whose count is 0 has no min yet.
ls_lat_val mergeCpus(const std::vector<ls_lat_val>& cpus)
{
    ls_lat_val sum {};
    sum.hist.min = ~0ULL;
    for (const ls_lat_val& c : cpus) {
        if (c.hist.count == 0)
            continue;
        sum.hist.count += c.hist.count;
        sum.hist.total += c.hist.total;
        sum.hist.min = std::min(sum.hist.min, c.hist.min);
        sum.hist.max = std::max(sum.hist.max, c.hist.max);
        for (size_t b = 0; b < LS_HIST_SLOTS; ++b)
            sum.hist.slots[b] += c.hist.slots[b];
        sum.errors += c.errors;
    }
    return sum;
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

class SyscallFamily final : public Family {
public:
    SyscallFamily(SyscallSkel skel, int ncpus)
        : skel_(std::move(skel))
        , ncpus_(ncpus)
    {
    }

    std::vector<bpf_program*> programs(size_t idx)
    {
        auto& p = skel_->progs;
        bpf_program* all[][2] = {
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
        return { all[idx][0], all[idx][1] };
    }

    // raw_syscalls sys_enter/sys_exit for every syscall at once; empty on success, else why.
    std::string attachRaw()
    {
        bpf_link* enter = bpf_program__attach(skel_->progs.raw_enter);
        if (!enter)
            return "attach failed: " + attachError();
        bpf_link* exit = bpf_program__attach(skel_->progs.raw_exit);
        if (!exit) {
            const std::string err = attachError();
            bpf_link__destroy(enter);
            return "attach failed: " + err;
        }
        links_.add(enter);
        links_.add(exit);
        for (size_t i = 0; i < std::size(kSyscalls); ++i)
            if (kNumbers[i] >= 0)
                attached_.push_back(i);
        return {};
    }

    // Empty on success, else why.
    std::string attach(size_t idx)
    {
        std::vector<bpf_link*> got;
        for (bpf_program* prog : programs(idx)) {
            bpf_link* l = bpf_program__attach(prog);
            if (!l) {
                const std::string err = attachError();
                for (bpf_link* g : got)
                    bpf_link__destroy(g);
                return "attach failed: " + err;
            }
            got.push_back(l);
        }
        for (bpf_link* l : got)
            links_.add(l);
        attached_.push_back(idx);
        return {};
    }

    void read(Snapshot& out) const override
    {
        const int fd = bpf_map__fd(skel_->maps.sc_lat);
        std::vector<ls_lat_val> cpus(static_cast<size_t>(ncpus_));
        for (size_t idx : attached_) {
            const uint32_t key = static_cast<uint32_t>(idx);
            if (bpf_map_lookup_elem(fd, &key, cpus.data()) != 0)
                continue;
            LatencyRecord r;
            r.name = kSyscalls[idx];
            r.is_syscall = true;
            const ls_lat_val sum = mergeCpus(cpus);
            r.hist = histFromKernel(sum.hist);
            r.errors = sum.errors;
            out.latencies.push_back(std::move(r));
        }
    }

    uint64_t recursionMisses() const override { return 0; } // tracepoint programs have no recursion guard
    void detach() override { links_.clear(); }
    std::vector<int> progFds() const override
    {
        std::vector<int> fds;
        bpf_program* p = nullptr;
        while ((p = bpf_object__next_program(skel_->obj, p)))
            fds.push_back(bpf_program__fd(p));
        return fds;
    }
    bool any() const { return !attached_.empty(); }

private:
    SyscallSkel skel_;
    int ncpus_;
    Links links_;
    std::vector<size_t> attached_;
};

} // namespace

std::unique_ptr<Family> openSyscalls(FamilyContext& ctx)
{
    auto skipAll = [&](const std::string& why) {
        for (const char* name : kSyscalls)
            ctx.status.push_back({ std::string("syscall:") + name,
                std::string("syscalls:sys_enter_") + name + ",sys_exit_" + name, "tracepoint", false, why });
        return nullptr;
    };
    if (!ctx.options.syscalls) {
        ctx.status.push_back({ "syscalls", "syscalls:sys_enter_*,sys_exit_*", "", false, "disabled" });
        return nullptr;
    }
    // raw_tp first (cheapest, see syscalls.bpf.c); a skeleton that cannot load
    // or attach it is reopened with the per-syscall tracepoints only.
    std::string raw_why;
    for (const bool raw : { true, false }) {
        SyscallSkel skel(ls_syscalls__open());
        if (!skel)
            return skipAll("open failed: " + errnoText(errno));
        configureRodata(skel->rodata, ctx.options);
        for (size_t i = 0; i < std::size(kSyscalls); ++i)
            if (kNumbers[i] >= 0 && kNumbers[i] < kNrMax)
                skel->rodata->sc_of_nr[kNumbers[i]] = static_cast<uint8_t>(i + 1);
        bpf_program* p = nullptr;
        while ((p = bpf_object__next_program(skel->obj, p))) {
            const bool is_raw = p == skel->progs.raw_enter || p == skel->progs.raw_exit;
            bpf_program__set_autoload(p, is_raw == raw);
        }
        if (int err = ctx.maps.reuseIn(skel->obj); err)
            return skipAll("map setup failed: " + errnoText(err));
        clearLibbpfLog();
        if (int err = ls_syscalls__load(skel.get()); err) {
            if (raw) {
                raw_why = "raw_tp: load failed: " + errnoText(err) + " [" + lastLibbpfError() + "]";
                continue;
            }
            return skipAll("load failed: " + errnoText(err) + " [" + lastLibbpfError() + "]");
        }
        auto family = std::make_unique<SyscallFamily>(std::move(skel), ctx.maps.ncpus());
        if (raw) {
            raw_why = family->attachRaw();
            if (!raw_why.empty()) {
                raw_why = "raw_tp: " + raw_why;
                continue;
            }
            for (size_t i = 0; i < std::size(kSyscalls); ++i) {
                const bool has = kNumbers[i] >= 0 && kNumbers[i] < kNrMax;
                ctx.status.push_back({ std::string("syscall:") + kSyscalls[i],
                    has ? "raw_syscalls:sys_enter,sys_exit nr " + std::to_string(kNumbers[i]) : "",
                    "raw_tp", has, has ? "" : "no such syscall on this architecture" });
            }
            return family;
        }
        for (size_t i = 0; i < std::size(kSyscalls); ++i) {
            const std::string name = kSyscalls[i];
            std::string why = family->attach(i);
            if (!why.empty() && errno == ENOENT)
                why = "no tracepoint syscalls:sys_enter_" + name
                    + " in this kernel (CONFIG_FTRACE_SYSCALLS off?)";
            if (!why.empty())
                why += "; " + raw_why;
            ctx.status.push_back({ "syscall:" + name, "syscalls:sys_enter_" + name + ",sys_exit_" + name,
                "tracepoint", why.empty(), why });
        }
        if (!family->any())
            return nullptr;
        return family;
    }
    return nullptr;
}

} // namespace lockscope::probes::detail
