// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Keeps the tgid filter closed over forks: a process forked by a filtered
 * process joins the filter. Threads share their tgid and need no entry.
 * At fork time current is the parent.
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
