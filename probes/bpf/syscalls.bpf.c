// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Latency of the IPC and POSIX-timer system calls, enter -> exit per thread,
 * from fentry/fexit on the syscall functions (preferred), raw_syscalls via
 * raw_tp, or the per-syscall tracepoints (last resort). The syscall index is
 * the order userspace lists them in.
 *
 * These fire on every call of a hot syscall (semtimedop: ~1M/s on 2 CPUs), so
 * the path takes no lock and touches no shared cache line:
 * - the start time lives in task-local storage (a thread is in at most one
 *   syscall, so one slot per thread), written in place; a hash map keyed by
 *   tid cost an update and a delete per call, each under a bucket spinlock;
 * - histograms are per CPU and merged by userspace, updated with plain
 *   stores: tracepoint programs run with preemption off and never nest on one
 *   CPU (bpf_prog_active), and syscall tracepoints never fire from irqs. One
 *   shared histogram made every CPU bounce its cache lines with atomic adds.
 */
#include "common.bpf.h"
#include "time_budget.bpf.h"

char LICENSE[] SEC("license") = "Dual BSD/GPL";

#define LS_SC_NR_MAX 1024

struct sc_task {
    __u64 ts;      /* start of the timed call in progress; 0: untimed */
    __u32 call;    /* index + 1 of the traced call in progress; 0: none */
    __u32 wanted;  /* passed the tgid filter; tgids are never removed from it */
    __u32 tick;    /* traced calls so far, for sampling */
    __u32 weight;  /* timing budget: calls the timed one in progress stands for */
};

/*
 * Time 1 in N traced calls per thread (--syscall-sample). A sampled-out call
 * is invisible to the exit: only its count, at enter, in calls.
 */
const volatile __u32 sc_sample = 1;

/*
 * The timing budget (time_budget.bpf.h, per CPU, one countdown per syscall)
 * is the default instead: an untimed call skips both clock reads and the
 * histogram's buckets but is still paired with its exit, which adds it to the
 * histogram's count and, when it failed, to errors. A timed call also goes
 * into the weighted histogram with the number of calls it stands for (itself
 * and the untimed ones its countdown lets pass), and userspace gives every
 * call that weighted distribution: the period follows the call rate, so a
 * busy phase of a run has fewer of its calls timed than a quiet one, and an
 * unweighted sample would lean towards the quiet phase's calls. The
 * countdown's jitter keeps a thread that alternates a short call and a long
 * one (a post, then a wait) from being timed at the same phase every time.
 */

struct {
    __uint(type, BPF_MAP_TYPE_TASK_STORAGE);
    __uint(map_flags, BPF_F_NO_PREALLOC);
    __type(key, int);
    __type(value, struct sc_task);
} sc_tasks SEC(".maps");

/*
 * Per CPU, summed by userspace; a slot's min is unset while its count is 0.
 * Drained per window (lockscope agent, sc_halves): two halves of
 * LS_MAX_SYSCALLS slots, calls filed in half sc_gen & 1. A read-out moves
 * sc_gen on, waits until no program that read the old value still runs,
 * then reads and zeroes the old half. Reading sc_gen costs a call ~15 ns
 * (bench/record/README.md), so a recording that is not drained compiles
 * it out and uses the first half only.
 */
struct {
    __uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
    __type(key, __u32);
    __type(value, struct ls_lat_val);
    __uint(max_entries, 2 * LS_MAX_SYSCALLS);
} sc_lat SEC(".maps");

const volatile bool sc_halves = false;
volatile __u32 sc_gen;

static __always_inline struct ls_lat_val *sc_slot(__u32 idx)
{
    __u32 key = sc_halves ? idx + (sc_gen & 1) * LS_MAX_SYSCALLS : idx;

    return bpf_map_lookup_elem(&sc_lat, &key);
}

/*
 * The thread's slot, or NULL when the thread is filtered out. With the tgid
 * filter on, a thread's first call pays the filter's hash lookup and marks
 * its slot; later calls find the mark. The comm can change, so it is checked
 * on every call.
 */
static __always_inline struct sc_task *wanted_task(void)
{
    struct task_struct *task = bpf_get_current_task_btf();
    struct sc_task *t;

    if (tgid_filter_on()) {
        t = bpf_task_storage_get(&sc_tasks, task, 0, 0);
        if (!t || !t->wanted) {
            __u32 tgid = bpf_get_current_pid_tgid() >> 32;

            if (!bpf_map_lookup_elem(&filter_tgids, &tgid))
                return NULL;
            t = bpf_task_storage_get(&sc_tasks, task, 0, BPF_LOCAL_STORAGE_GET_F_CREATE);
            if (!t) {
                count(LS_C_MAP_FULL);
                return NULL;
            }
            t->wanted = 1;
        }
    } else {
        t = bpf_task_storage_get(&sc_tasks, task, 0, BPF_LOCAL_STORAGE_GET_F_CREATE);
        if (!t) {
            count(LS_C_MAP_FULL);
            return NULL;
        }
    }
    if (filter_comm_on && !comm_wanted()) {
        t->call = 0;
        return NULL;
    }
    return t;
}

static __always_inline int sc_enter(__u32 idx)
{
    struct sc_task *t = wanted_task();

    if (!t)
        return 0;
    t->ts = 0;
    t->weight = 0;
    t->call = idx + 1;
    if (sc_sample > 1) {
        /* Exact call counts cost one per-CPU array slot; the clock is what sampling saves. */
        struct ls_lat_val *v = sc_slot(idx);

        if (v)
            v->calls += 1;
        if (t->tick++ % sc_sample) {
            t->call = 0;
            return 0;
        }
    } else {
        struct ls_time_tick *tick = time_tick_here();

        if (tick) {
            if (untimed_event(tick, idx, idx))
                return 0;
            /* Its own clock read, so the bookkeeping stays out of the call's time. */
            timed_event(tick, idx, idx, bpf_ktime_get_ns(), true);
            t->weight = tick->skip[idx & (LS_TIME_SLOTS - 1)] + 1;
        }
    }
    t->ts = bpf_ktime_get_ns();
    return 0;
}

/* The exit of the thread's traced call idx, if one is in progress. */
static __always_inline int sc_finish(struct sc_task *t, __u32 idx, long ret)
{
    __u64 ts = t->ts, now = ts ? bpf_ktime_get_ns() : 0;
    __u32 call = t->call, weight = t->weight;

    t->call = 0;
    if (call != idx + 1)
        return 0;
    struct ls_lat_val *v = sc_slot(idx);

    if (!v)
        return 0;
    if (ts) {
        hist_add_cpu(&v->hist, now - ts);
        if (weight)
            weighted_add(&v->weighted, now - ts, weight);
    } else {
        v->hist.count += 1; /* untimed: the budget's */
    }
    if (ret < 0)
        v->errors += 1;
    count(LS_C_SYSCALL_EVENTS);
    return 0;
}

static __always_inline int sc_exit(__u32 idx, long ret)
{
    struct sc_task *t = bpf_task_storage_get(&sc_tasks, bpf_get_current_task_btf(), 0, 0);

    if (!t || !t->call)
        return 0;
    return sc_finish(t, idx, ret);
}

/*
 * Preferred backend: raw_syscalls through raw_tp. The per-syscall tracepoints
 * go through perf's handler, which copies the arguments into a perf buffer on
 * every call before the program runs; that, not the program, was most of the
 * cost (see bench/record/README.md). Here every syscall runs the program, so
 * the enter side filters on the number first, and the exit side needs no
 * number: a thread with a start time pending is leaving that syscall.
 */
const volatile __u8 sc_of_nr[LS_SC_NR_MAX] = {}; /* syscall nr -> index + 1; 0: not traced */

SEC("raw_tp/sys_enter")
int raw_enter(struct bpf_raw_tracepoint_args *ctx)
{
    __u64 nr = ctx->args[1];

    if (nr >= LS_SC_NR_MAX)
        return 0;
    nr &= LS_SC_NR_MAX - 1;
    __u32 i = sc_of_nr[nr];

    if (!i)
        return 0;
    return sc_enter(i - 1);
}

SEC("raw_tp/sys_exit")
int raw_exit(struct bpf_raw_tracepoint_args *ctx)
{
    struct sc_task *t = bpf_task_storage_get(&sc_tasks, bpf_get_current_task_btf(), 0, 0);

    if (!t || !t->call)
        return 0;
    return sc_finish(t, t->call - 1, (long)ctx->args[1]);
}

/*
 * fentry/fexit on the syscall functions: only these functions pay, through
 * their trampolines, where raw_syscalls hooks put every syscall of every task
 * on the tracing slow path. The section names the x86-64 function so the
 * object loads as is (bpftool prog loadall in the lab); userspace re-points
 * each program at the running architecture's function
 * (bpf_program__set_attach_target).
 */
#define SYSCALL_FENTRY(idx, name)                                                      \
    SEC("fentry/__x64_sys_" #name) int BPF_PROG(fentry_##idx) { return sc_enter(idx); } \
    SEC("fexit/__x64_sys_" #name) int BPF_PROG(fexit_##idx)                            \
    {                                                                                  \
        __u64 ret = 0;                                                                 \
                                                                                       \
        bpf_get_func_ret(ctx, &ret);                                                   \
        return sc_exit(idx, (long)ret);                                                \
    }

SYSCALL_FENTRY(0, semtimedop)
SYSCALL_FENTRY(1, semop)
SYSCALL_FENTRY(2, semget)
SYSCALL_FENTRY(3, msgget)
SYSCALL_FENTRY(4, shmget)
SYSCALL_FENTRY(5, timer_gettime)
SYSCALL_FENTRY(6, timer_settime)
SYSCALL_FENTRY(7, timer_getoverrun)
SYSCALL_FENTRY(8, timer_delete)

#define SYSCALL_PAIR(name, idx)                                                        \
    SEC("tracepoint/syscalls/sys_enter_" #name)                                        \
    int enter_##name(void *ctx)                                                        \
    {                                                                                  \
        return sc_enter(idx);                                                          \
    }                                                                                  \
    SEC("tracepoint/syscalls/sys_exit_" #name)                                         \
    int exit_##name(struct trace_event_raw_sys_exit *ctx)                              \
    {                                                                                  \
        return sc_exit(idx, ctx->ret);                                                 \
    }

SYSCALL_PAIR(semtimedop, 0)
SYSCALL_PAIR(semop, 1)
SYSCALL_PAIR(semget, 2)
SYSCALL_PAIR(msgget, 3)
SYSCALL_PAIR(shmget, 4)
SYSCALL_PAIR(timer_gettime, 5)
SYSCALL_PAIR(timer_settime, 6)
SYSCALL_PAIR(timer_getoverrun, 7)
SYSCALL_PAIR(timer_delete, 8)
