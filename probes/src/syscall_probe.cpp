// SPDX-License-Identifier: GPL-2.0-or-later
// IPC and POSIX-timer syscall latency from the syscalls:sys_enter_/sys_exit_ tracepoints.
#include <algorithm>
#include <cerrno>
#include <vector>

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
    SyscallSkel skel(ls_syscalls__open());
    if (!skel)
        return skipAll("open failed: " + errnoText(errno));
    configureRodata(skel->rodata, ctx.options);
    if (int err = ctx.maps.reuseIn(skel->obj); err)
        return skipAll("map setup failed: " + errnoText(err));
    clearLibbpfLog();
    if (int err = ls_syscalls__load(skel.get()); err)
        return skipAll("load failed: " + errnoText(err) + " [" + lastLibbpfError() + "]");
    auto family = std::make_unique<SyscallFamily>(std::move(skel), ctx.maps.ncpus());
    for (size_t i = 0; i < std::size(kSyscalls); ++i) {
        const std::string name = kSyscalls[i];
        std::string why = family->attach(i);
        if (!why.empty() && errno == ENOENT)
            why = "no tracepoint syscalls:sys_enter_" + name
                + " in this kernel (CONFIG_FTRACE_SYSCALLS off?)";
        ctx.status.push_back({ "syscall:" + name, "syscalls:sys_enter_" + name + ",sys_exit_" + name,
            "tracepoint", why.empty(), why });
    }
    if (!family->any())
        return nullptr;
    return family;
}

} // namespace lockscope::probes::detail
