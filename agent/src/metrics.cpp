// SPDX-License-Identifier: GPL-2.0-or-later
#include "lockscope/agent/metrics.h"

#include <cinttypes>
#include <cstdio>

namespace lockscope::agent {

namespace {

// Label values escape backslash, double quote and newline (exposition format).
std::string escapeLabel(const std::string& v)
{
    std::string out;
    out.reserve(v.size());
    for (char c : v) {
        if (c == '\\')
            out += "\\\\";
        else if (c == '"')
            out += "\\\"";
        else if (c == '\n')
            out += "\\n";
        else
            out += c;
    }
    return out;
}

std::string number(double v)
{
    char buf[40];
    std::snprintf(buf, sizeof buf, "%.17g", v);
    return buf;
}

// A bucket bound as short as it is exact (2^k ns: "2.56e-07", "68.719476736").
std::string bound(double v)
{
    char buf[40];
    std::snprintf(buf, sizeof buf, "%.12g", v);
    return buf;
}

std::string number(uint64_t v)
{
    return std::to_string(v);
}

class Exposition {
public:
    void family(const std::string& name, const char* type, const std::string& help)
    {
        text_ += std::string("# HELP ") + name + ' ' + help + '\n';
        text_ += std::string("# TYPE ") + name + ' ' + type + '\n';
    }
    void sample(const std::string& name, const std::string& labels, const std::string& value)
    {
        text_ += name;
        if (!labels.empty())
            text_ += '{' + labels + '}';
        text_ += ' ' + value + '\n';
    }
    std::string take() { return std::move(text_); }

private:
    std::string text_;
};

struct LockRow {
    std::string labels;
    const LockFigures* figures;
};

std::vector<LockRow> lockRows(const LockSeries& series)
{
    std::vector<LockRow> rows;
    for (const LockSeriesEntry* e : series.shown()) {
        std::string labels = "lock=\"" + escapeLabel(e->key) + "\",lock_type=\"" + escapeLabel(e->type) +
                             "\",lock_name=\"" + escapeLabel(e->name) + "\",cgroup=\"" + escapeLabel(e->cgroup) + '"';
        rows.push_back({std::move(labels), &e->figures});
    }
    rows.push_back({"lock=\"other\",lock_type=\"\",lock_name=\"\",cgroup=\"\"", &series.other()});
    return rows;
}

// One histogram series: log2 buckets of nanoseconds as cumulative buckets in seconds.
void histogramSeries(Exposition& x, const std::string& name, const std::string& labels,
                     const std::array<uint64_t, Log2Hist::kBuckets>& buckets, uint64_t count, uint64_t ns)
{
    uint64_t cumulative = 0;
    for (unsigned b = 0; b < kFirstBucket; ++b)
        cumulative += buckets[b];
    for (unsigned b = kFirstBucket; b <= kLastBucket; ++b) {
        cumulative += buckets[b];
        const double le = double(uint64_t(1) << (b + 1)) * 1e-9;
        x.sample(name + "_bucket", labels + ",le=\"" + bound(le) + '"', number(cumulative));
    }
    x.sample(name + "_bucket", labels + ",le=\"+Inf\"", number(count));
    x.sample(name + "_sum", labels, number(double(ns) * 1e-9));
    x.sample(name + "_count", labels, number(count));
}

void histogram(Exposition& x, const std::string& name, const std::vector<LockRow>& rows,
               std::array<uint64_t, Log2Hist::kBuckets> LockFigures::*buckets, uint64_t LockFigures::*count,
               uint64_t LockFigures::*ns)
{
    for (const LockRow& r : rows)
        histogramSeries(x, name, r.labels, r.figures->*buckets, r.figures->*count, r.figures->*ns);
}

void lockMetrics(Exposition& x, const LockSeries& series, bool holds)
{
    const std::vector<LockRow> rows = lockRows(series);
    x.family("lockscope_lock_contentions_total", "counter",
             "Contended acquisitions (waits) of a lock; the top locks by wait time have their own series, "
             "lock=\"other\" the rest.");
    for (const LockRow& r : rows)
        x.sample("lockscope_lock_contentions_total", r.labels, number(r.figures->contentions));
    x.family("lockscope_lock_wait_seconds_total", "counter", "Time tasks waited for a lock, in seconds.");
    for (const LockRow& r : rows)
        x.sample("lockscope_lock_wait_seconds_total", r.labels, number(double(r.figures->wait_ns) * 1e-9));
    x.family("lockscope_lock_wait_duration_seconds", "histogram",
             "Duration of each contended wait for a lock, in seconds (log2 buckets).");
    histogram(x, "lockscope_lock_wait_duration_seconds", rows, &LockFigures::wait_buckets, &LockFigures::contentions,
              &LockFigures::wait_ns);
    if (!holds)
        return;
    x.family("lockscope_lock_holds_total", "counter", "Timed holds of a spin lock.");
    for (const LockRow& r : rows)
        x.sample("lockscope_lock_holds_total", r.labels, number(r.figures->holds));
    x.family("lockscope_lock_hold_seconds_total", "counter", "Time a spin lock was held, in seconds.");
    for (const LockRow& r : rows)
        x.sample("lockscope_lock_hold_seconds_total", r.labels, number(double(r.figures->hold_ns) * 1e-9));
    x.family("lockscope_lock_hold_duration_seconds", "histogram", "Duration of each timed hold, in seconds.");
    histogram(x, "lockscope_lock_hold_duration_seconds", rows, &LockFigures::hold_buckets, &LockFigures::holds,
              &LockFigures::hold_ns);
}

// The opt-in latency probes (--syscalls: label syscall; --functions: label
// function): calls, errors (syscalls) and the duration histogram. Under a timing budget
// the untimed calls have the timed ones' times (LatencyEntry); sampled 1 in N
// (--syscall-sample), the histogram and errors hold the timed calls only.
void latencyMetrics(Exposition& x, const std::vector<LatencyEntry>& entries, const char* what, const char* label,
                    const std::string& whose, bool errors)
{
    if (entries.empty())
        return;
    const std::string prefix = std::string("lockscope_") + what;
    std::vector<std::string> labels;
    labels.reserve(entries.size());
    for (const LatencyEntry& e : entries)
        labels.push_back(std::string(label) + "=\"" + escapeLabel(e.name) + '"');
    x.family(prefix + "_calls_total", "counter", "Calls of each " + whose + ", counted on return.");
    for (size_t i = 0; i < entries.size(); ++i)
        x.sample(prefix + "_calls_total", labels[i], number(entries[i].calls()));
    if (errors) {
        x.family(prefix + "_errors_total", "counter", "Calls of each " + whose + " that returned an error.");
        for (size_t i = 0; i < entries.size(); ++i)
            x.sample(prefix + "_errors_total", labels[i], number(entries[i].errors));
    }
    x.family(prefix + "_duration_seconds", "histogram",
             "Duration of each call of each " + whose + ", entry to return, in seconds (log2 buckets).");
    for (size_t i = 0; i < entries.size(); ++i) {
        const Log2Hist& h = entries[i].latency;
        histogramSeries(x, prefix + "_duration_seconds", labels[i], h.buckets(), h.count(), h.total());
    }
}

void cpuMetrics(Exposition& x, const CpuProfile& cpu)
{
    x.family("lockscope_cpu_samples_total", "counter",
             "On-CPU samples of every CPU, by where the CPU was: state=\"spin\" in spin-lock functions, "
             "\"idle\" in the idle loop, \"bpf\" running BPF (lockscope's probes among it; a program's own "
             "spin-lock is in spin too), \"all\" every sample. The CPU share spinning is the ratio of the "
             "spin and all rates.");
    x.sample("lockscope_cpu_samples_total", "state=\"all\"", number(cpu.samples));
    x.sample("lockscope_cpu_samples_total", "state=\"spin\"", number(cpu.lock_samples));
    x.sample("lockscope_cpu_samples_total", "state=\"idle\"", number(cpu.idle_samples));
    x.sample("lockscope_cpu_samples_total", "state=\"bpf\"", number(cpu.bpf_samples.value_or(0)));
    x.family("lockscope_cpu_sampling_hertz", "gauge", "On-CPU sampling frequency per CPU (0: not sampled).");
    x.sample("lockscope_cpu_sampling_hertz", "", number(uint64_t(cpu.frequency_hz)));
}

void statsMetrics(Exposition& x, const Stats& st, const AgentHealth& h)
{
    x.family("lockscope_agent_events_total", "counter", "Probe events aggregated in the kernel.");
    x.sample("lockscope_agent_events_total", "", number(st.events));
    x.family("lockscope_agent_events_lost_total", "counter",
             "Events the probes could not record, by why: nesting (pending waits overflowed), "
             "untimed_unplaced (untimed waits and syscalls with no timed one of their lock or syscall to "
             "take a time from), "
             "map_full (a BPF map was full), map_busy (a map's bucket was locked on that CPU by what the "
             "probe interrupted, e.g. the agent's own drain), unmatched (an end without its begin).");
    x.sample("lockscope_agent_events_lost_total", "reason=\"nesting\"", number(st.lost - st.untimed_unplaced));
    x.sample("lockscope_agent_events_lost_total", "reason=\"untimed_unplaced\"", number(st.untimed_unplaced));
    x.sample("lockscope_agent_events_lost_total", "reason=\"map_full\"", number(st.map_full));
    x.sample("lockscope_agent_events_lost_total", "reason=\"map_busy\"", number(st.map_busy));
    x.sample("lockscope_agent_events_lost_total", "reason=\"unmatched\"", number(st.unmatched));
    x.family("lockscope_agent_recursion_misses_total", "counter", "Probe runs the kernel skipped (re-entry).");
    x.sample("lockscope_agent_recursion_misses_total", "", number(st.recursion_misses));
    x.family("lockscope_agent_stacks_not_taken_total", "counter",
             "Events kept without their stack, by why: failed (the walk failed), collided (the stack's "
             "bucket in the kernel's stack map held another stack, the spill map's too), nested (another walk "
             "was running on the CPU, most often the walk's own map lock), budget (stack budget), "
             "table_full (the agent's stack table was full), process_exited (a user lock's process was gone "
             "before the read-out could name its stack).");
    x.sample("lockscope_agent_stacks_not_taken_total", "reason=\"failed\"",
             number(st.stack_failures - st.stack_collisions - st.stacks_nested));
    x.sample("lockscope_agent_stacks_not_taken_total", "reason=\"collided\"", number(st.stack_collisions));
    x.sample("lockscope_agent_stacks_not_taken_total", "reason=\"nested\"", number(st.stacks_nested));
    x.sample("lockscope_agent_stacks_not_taken_total", "reason=\"budget\"", number(st.stacks_unsampled));
    x.sample("lockscope_agent_stacks_not_taken_total", "reason=\"table_full\"", number(h.stacks_not_kept));
    x.sample("lockscope_agent_stacks_not_taken_total", "reason=\"process_exited\"", number(h.user_stacks_of_exited));
    x.family("lockscope_agent_stacks_spilled_total", "counter",
             "Stacks kept in the spill map because their bucket in their own stack map held another stack.");
    x.sample("lockscope_agent_stacks_spilled_total", "", number(st.stacks_spilled));
    x.family("lockscope_agent_holds_dropped_total", "counter",
             "Holds whose release was never seen, dropped: a user lock held by a thread that exited "
             "(--user-locks), a spin-lock release missed on re-entry (--hold).");
    x.sample("lockscope_agent_holds_dropped_total", "", number(st.stale_holds));
    x.family("lockscope_agent_waits_untimed_total", "counter",
             "Contended waits counted but not timed (timing budget): their times follow the timed ones.");
    x.sample("lockscope_agent_waits_untimed_total", "", number(st.waits_untimed));
    x.family("lockscope_agent_holders_not_found_total", "counter",
             "Contended spin-lock waits no other CPU was seen holding the lock for when they began "
             "(--holder-stacks): in the waits, not in /debug/pprof/lock_owners.");
    x.sample("lockscope_agent_holders_not_found_total", "", number(st.holder_not_found));
    x.family("lockscope_agent_own_lock_events_total", "counter",
             "Lock events inside lockscope's own BPF programs, left out.");
    x.sample("lockscope_agent_own_lock_events_total", "", number(st.own_lock_events));
}

void healthMetrics(Exposition& x, const AgentHealth& h)
{
    x.family("lockscope_agent_windows_total", "counter", "Read-outs of the in-kernel aggregates.");
    x.sample("lockscope_agent_windows_total", "", number(h.windows));
    x.family("lockscope_agent_readout_seconds_total", "counter", "Wall time spent reading the aggregates out.");
    x.sample("lockscope_agent_readout_seconds_total", "", number(h.readout_seconds_total));
    x.family("lockscope_agent_readout_cpu_seconds_total", "counter",
             "CPU time (user and system) spent reading the aggregates out.");
    x.sample("lockscope_agent_readout_cpu_seconds_total", "", number(h.readout_cpu_seconds_total));
    x.family("lockscope_agent_last_readout_seconds", "gauge", "Wall time of the last read-out.");
    x.sample("lockscope_agent_last_readout_seconds", "", number(h.last_readout_seconds));
    x.family("lockscope_agent_wait_attached_ratio", "gauge",
        "Share of the last window the wait programs were attached; below 1 (above --wait-rate-cap) the wait "
        "figures of that window are estimates scaled up by it.");
    x.sample("lockscope_agent_wait_attached_ratio", "", number(h.wait_attached_ratio));
    x.family("lockscope_agent_stack_ids_forgotten_total", "counter",
             "Kernel stack ids deleted from the stack maps after going idle.");
    x.sample("lockscope_agent_stack_ids_forgotten_total", "", number(h.stack_ids_forgotten));
    x.family("lockscope_agent_locks_evicted_total", "counter",
             "Locks dropped from bounded tables, by table: ranking (the metrics' memory of locks beyond the "
             "top ones), profile (folded into \"[other locks]\" of the cumulative profile).");
    x.sample("lockscope_agent_locks_evicted_total", "table=\"ranking\"", number(h.locks_forgotten));
    x.sample("lockscope_agent_locks_evicted_total", "table=\"profile\"", number(h.locks_folded));
    x.family("lockscope_agent_owners_folded_total", "counter",
             "Lock owners (--lock-owner) folded into \"[owners not kept]\" of the cumulative profile.");
    x.sample("lockscope_agent_owners_folded_total", "", number(h.owners_folded));
    x.family("lockscope_agent_resident_memory_bytes", "gauge", "Resident set size of the agent.");
    x.sample("lockscope_agent_resident_memory_bytes", "", number(h.resident_bytes));
    x.family("lockscope_agent_heap_in_use_bytes", "gauge",
             "Heap the agent allocated and has not freed: its live data, without the allocator's free space.");
    x.sample("lockscope_agent_heap_in_use_bytes", "", number(h.heap_in_use_bytes));
    x.family("lockscope_agent_start_time_seconds", "gauge", "When the agent started, in Unix time.");
    x.sample("lockscope_agent_start_time_seconds", "", number(h.start_time_seconds));
    x.family("lockscope_agent_profile_requests_rejected_total", "counter",
             "Profile and capture requests refused because too many were running.");
    x.sample("lockscope_agent_profile_requests_rejected_total", "", number(h.requests_rejected));
    x.family("lockscope_agent_probe_attached", "gauge", "1 for each probe attached, 0 for one that is not.");
    for (const ProbeStatus& p : h.probes)
        x.sample("lockscope_agent_probe_attached",
                 "probe=\"" + escapeLabel(p.name) + "\",hook=\"" + escapeLabel(p.hook) + '"',
                 p.attached ? "1" : "0");
    if (!h.bpf_stats_enabled)
        return;
    x.family("lockscope_agent_bpf_run_seconds_total", "counter",
             "Time the agent's BPF programs ran (kernel.bpf_stats_enabled=1), per program.");
    for (const probes::ProgramStats& p : h.programs)
        x.sample("lockscope_agent_bpf_run_seconds_total", "program=\"" + escapeLabel(p.name) + '"',
                 number(double(p.run_ns) * 1e-9));
    x.family("lockscope_agent_bpf_runs_total", "counter", "Runs of the agent's BPF programs, per program.");
    for (const probes::ProgramStats& p : h.programs)
        x.sample("lockscope_agent_bpf_runs_total", "program=\"" + escapeLabel(p.name) + '"', number(p.run_count));
}

} // namespace

std::string renderMetrics(const LockSeries& series, const Capture& cumulative, const AgentHealth& health)
{
    Exposition x;
    bool holds = false;
    for (const Lock& l : cumulative.locks)
        holds = holds || !l.hold.empty();
    lockMetrics(x, series, holds);
    latencyMetrics(x, cumulative.syscalls, "syscall", "syscall", "IPC/timer syscall (--syscalls)", true);
    // The function probe times calls but does not read what they return.
    latencyMetrics(x, cumulative.functions, "function", "function", "IPC/timer lookup function (--functions)", false);
    cpuMetrics(x, cumulative.cpu);
    statsMetrics(x, cumulative.stats, health);
    healthMetrics(x, health);
    return x.take();
}

} // namespace lockscope::agent
