// SPDX-License-Identifier: GPL-2.0-or-later
#include <algorithm>
#include <cstdio>
#include <fstream>

#include <bpf/bpf.h>

#include "bpf_util.h"
#include "family.h"

namespace lockscope::probes {

namespace {

using namespace detail;

class SessionImpl final : public Session {
public:
    explicit SessionImpl(const Options& options)
        : maps_(options)
    {
        const std::string tracefs = ensureTracefs();
        FamilyContext ctx { options, maps_, status_ };
        using Factory = std::unique_ptr<Family> (*)(FamilyContext&);
        for (Factory f :
            { openFollow, openWait, openHold, openSyscalls, openFunctions, openCpu, openUserLocks }) {
            if (auto family = f(ctx))
                families_.push_back(std::move(family));
        }
        settleHolderStacks(ctx);
        if (!tracefs.empty())
            for (ProbeStatus& s : status_)
                if (s.hook == "tracepoint")
                    s.reason += (s.reason.empty() ? "" : "; ") + tracefs;
        bool any = false;
        for (const ProbeStatus& s : status_)
            any = any || (s.attached && s.name != "fork_follow");
        if (!any) {
            std::string why;
            for (const ProbeStatus& s : status_)
                if (!s.attached && s.reason != kProbeDisabled) {
                    why = s.name + ": " + s.reason;
                    break;
                }
            throw ProbeError(
                "lockscope: no probe could be attached" + (why.empty() ? std::string() : " (" + why + ")"));
        }
    }

    ~SessionImpl() override
    {
        // Detach before the maps go away.
        for (auto& f : families_)
            f->detach();
        families_.clear();
    }

    const std::vector<ProbeStatus>& status() const override { return status_; }
    void addTgid(uint32_t tgid) override { maps_.addTgid(tgid); }

    uint64_t eventsSoFar() const override
    {
        uint64_t n = 0;
        for (ls_counter c : { LS_C_WAIT_EVENTS, LS_C_HOLD_EVENTS, LS_C_SYSCALL_EVENTS, LS_C_FUNC_EVENTS,
                 LS_C_CPU_SAMPLES, LS_C_ULOCK_EVENTS })
            n = saturatingAdd(n, maps_.counter(c));
        return n;
    }

    Snapshot snapshot() const override
    {
        Snapshot s;
        for (const auto& f : families_)
            f->read(s);
        addCounterStats(s, counterStats());
        return s;
    }

    Snapshot drain() override
    {
        Snapshot s;
        for (const auto& f : families_)
            f->drain(s);
        const Snapshot now = counterStats();
        Snapshot delta = now;
        delta.cpu_samples -= std::min(delta.cpu_samples, drained_.cpu_samples);
        for (uint64_t Stats::*field : kCounterFields)
            delta.stats.*field -= std::min(delta.stats.*field, drained_.stats.*field);
        drained_ = now;
        addCounterStats(s, delta);
        return s;
    }

    bool drainable() const override
    {
        return std::all_of(families_.begin(), families_.end(), [](const auto& f) { return f->drainable(); });
    }

    void forgetStack(int64_t id) const override
    {
        if (std::none_of(families_.begin(), families_.end(), [id](const auto& f) { return f->deferForget(id); }))
            maps_.forgetStack(id);
    }

    std::vector<uint64_t> kernelStack(int64_t id) const override { return maps_.stack(id); }
    std::vector<uint64_t> userStack(int64_t id, uint32_t) const override { return maps_.stack(id); }

    std::vector<ProgramCode> programCode() const override
    {
        std::vector<ProgramCode> out;
        for (const auto& f : families_)
            for (int fd : f->progFds()) {
                auto code = jitCode(fd);
                out.insert(out.end(), code.begin(), code.end());
            }
        return out;
    }

    std::vector<ProgramStats> programStats() const override
    {
        std::vector<ProgramStats> out;
        for (const auto& f : families_)
            for (int fd : f->progFds()) {
                bpf_prog_info info {};
                __u32 len = sizeof info;
                if (fd >= 0 && bpf_obj_get_info_by_fd(fd, &info, &len) == 0)
                    out.push_back({ info.name, info.run_time_ns, info.run_cnt });
            }
        return out;
    }

    void detach() override
    {
        for (auto& f : families_)
            f->detach();
    }

private:
    // The counters behind Stats (and the CPU sample count), as a snapshot
    // holding nothing else.
    Snapshot counterStats() const
    {
        Snapshot s;
        auto c = [this](ls_counter k) { return maps_.counter(k); };
        s.cpu_samples = c(LS_C_CPU_SAMPLES);
        s.stats.events = eventsSoFar();
        s.stats.lost = c(LS_C_NEST_OVERFLOW) + c(LS_C_HOLD_OVERFLOW) + c(LS_C_STALE);
        s.stats.map_full = c(LS_C_MAP_FULL);
        s.stats.stack_failures = c(LS_C_STACK_FAIL) + c(LS_C_STACK_NESTED);
        s.stats.stack_collisions = c(LS_C_STACK_COLLIDED);
        s.stats.stacks_nested = c(LS_C_STACK_NESTED);
        s.stats.stacks_spilled = c(LS_C_STACK_SPILLED);
        s.stats.aborted_waits = c(LS_C_ABORTED);
        s.stats.unmatched = c(LS_C_UNMATCHED) + c(LS_C_HOLD_UNMATCHED) + c(LS_C_ULOCK_UNMATCHED);
        s.stats.holder_not_found = c(LS_C_HOLDER_MISSING);
        s.stats.impossible_holds = c(LS_C_HOLD_IMPOSSIBLE);
        s.stats.hold_races = c(LS_C_HOLD_RACED);
        s.stats.stale_holds = c(LS_C_HOLD_STALE);
        s.stats.map_busy = c(LS_C_MAP_BUSY) + c(LS_C_MAP_NOMEM); // refused although not full
        s.stats.stacks_unsampled = c(LS_C_STACK_UNSAMPLED); // untimed waits included: never walked
        s.stats.cpu_unstacked = c(LS_C_CPU_UNSTACKED);
        s.stats.owner_stacks_unsampled = c(LS_C_OWNER_STACK_UNSAMPLED);
        for (const auto& f : families_)
            s.stats.recursion_misses += f->recursionMisses();
        return s;
    }
    // The fields counterStats fills.
    static constexpr uint64_t Stats::*kCounterFields[] = { &Stats::events, &Stats::lost, &Stats::map_full,
        &Stats::stack_failures, &Stats::stack_collisions, &Stats::stacks_nested, &Stats::stacks_spilled,
        &Stats::aborted_waits, &Stats::unmatched, &Stats::holder_not_found,
        &Stats::impossible_holds, &Stats::hold_races, &Stats::stale_holds, &Stats::map_busy, &Stats::stacks_unsampled,
        &Stats::cpu_unstacked, &Stats::owner_stacks_unsampled, &Stats::recursion_misses };

    SharedMaps maps_;
    Snapshot drained_; // counterStats() at the last drain
    std::vector<ProbeStatus> status_;
    std::vector<std::unique_ptr<Family>> families_;
};

} // namespace

void detail::addCounterStats(Snapshot& s, const Snapshot& counters)
{
    s.cpu_samples = counters.cpu_samples;
    Stats st = counters.stats;
    st.events += s.stats.events;
    st.stacks_unsampled += s.stats.stacks_unsampled;
    st.stack_failures += s.stats.stack_failures;
    st.lost += s.stats.lost;
    st.untimed_unplaced += s.stats.untimed_unplaced;
    st.stale_holds += s.stats.stale_holds;
    st.waits_untimed = s.stats.waits_untimed;
    st.syscalls_untimed = s.stats.syscalls_untimed;
    st.own_lock_events = s.stats.own_lock_events;
    s.stats = st;
}

bool bpfStatsEnabled()
{
    std::ifstream in("/proc/sys/kernel/bpf_stats_enabled");
    int on = 0;
    return (in >> on) && on == 1;
}

std::unique_ptr<Session> Session::open(const Options& options)
{
    detail::checkEnvironment();
    detail::installLibbpfLogger();
    return std::make_unique<SessionImpl>(options);
}

} // namespace lockscope::probes
