// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Keeps the tgid filter closed over forks: a process forked by a filtered
 * process joins the filter. Threads share their tgid and need no entry.
 * At fork time current is the parent. A process leaves the filter when its
 * last thread exits, so that a fork-heavy workload does not fill the map
 * (and a recycled pid is not followed by mistake).
 */
#include "common.bpf.h"

char LICENSE[] SEC("license") = "Dual BSD/GPL";

static __always_inline int on_fork(__u32 child_tgid)
{
    __u32 parent = bpf_get_current_pid_tgid() >> 32;
    __u8 one = 1;

    if (child_tgid == parent || !bpf_map_lookup_elem(&filter_tgids, &parent))
        return 0;
    if (bpf_map_update_elem(&filter_tgids, &child_tgid, &one, BPF_ANY))
        count(LS_C_MAP_FULL);
    else
        count(LS_C_FORKS_FOLLOWED);
    return 0;
}

SEC("tp_btf/sched_process_fork")
int BPF_PROG(fork_btf, struct task_struct *parent, struct task_struct *child)
{
    return on_fork(child->tgid);
}

SEC("raw_tp/sched_process_fork")
int BPF_PROG(fork_raw, struct task_struct *parent, struct task_struct *child)
{
    return on_fork(BPF_CORE_READ(child, tgid));
}

/* child_pid is the new task's id, which is its tgid when it is a process. */
SEC("tracepoint/sched/sched_process_fork")
int fork_tp(struct trace_event_raw_sched_process_fork *ctx)
{
    return on_fork((__u32)ctx->child_pid);
}

/* sched_process_exit runs per thread, after do_exit() counted this thread
 * out of signal->live: 0 means the whole process is gone. */
static __always_inline int on_exit(struct task_struct *task)
{
    __u32 tgid;

    if (BPF_CORE_READ(task, signal, live.counter) != 0)
        return 0;
    tgid = BPF_CORE_READ(task, tgid);
    bpf_map_delete_elem(&filter_tgids, &tgid);
    return 0;
}

SEC("tp_btf/sched_process_exit")
int BPF_PROG(exit_btf, struct task_struct *task)
{
    return on_exit(task);
}

SEC("raw_tp/sched_process_exit")
int BPF_PROG(exit_raw, struct task_struct *task)
{
    return on_exit(task);
}

/* The exiting task is current. */
SEC("tracepoint/sched/sched_process_exit")
int exit_tp(void *ctx)
{
    return on_exit((struct task_struct *)bpf_get_current_task());
}
