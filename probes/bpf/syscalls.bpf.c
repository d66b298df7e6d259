// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Latency of the IPC and POSIX-timer system calls, enter -> exit per thread,
 * from the per-syscall tracepoints (cheaper than raw_syscalls, which fire for
 * every syscall). A thread is in at most one syscall, so one start per tid.
 * The syscall index (LS_SC_*) is the order userspace lists them in.
 */
#include "common.bpf.h"

char LICENSE[] SEC("license") = "Dual BSD/GPL";

struct sc_start {
    __u64 ts;
    __u32 idx;
    __u32 pad;
};

struct {
    __uint(type, BPF_MAP_TYPE_HASH);
    __type(key, __u32);
    __type(value, struct sc_start);
    __uint(max_entries, 16384);
} sc_starts SEC(".maps");

/* Array slots start zeroed: userspace writes min = ~0 into each before attach. */
struct {
    __uint(type, BPF_MAP_TYPE_ARRAY);
    __type(key, __u32);
    __type(value, struct ls_lat_val);
    __uint(max_entries, LS_MAX_SYSCALLS);
} sc_lat SEC(".maps");

static __always_inline int sc_enter(__u32 idx)
{
    if (!task_wanted())
        return 0;
    __u32 tid = (__u32)bpf_get_current_pid_tgid();
    struct sc_start s = { .ts = bpf_ktime_get_ns(), .idx = idx };

    if (bpf_map_update_elem(&sc_starts, &tid, &s, BPF_ANY))
        count(LS_C_MAP_FULL);
    return 0;
}

static __always_inline int sc_exit(__u32 idx, long ret)
{
    __u32 tid = (__u32)bpf_get_current_pid_tgid();
    struct sc_start *s = bpf_map_lookup_elem(&sc_starts, &tid);

    if (!s)
        return 0;
    __u64 delta = bpf_ktime_get_ns() - s->ts;
    __u32 start_idx = s->idx;
    bpf_map_delete_elem(&sc_starts, &tid);
    if (start_idx != idx)
        return 0;
    struct ls_lat_val *v = bpf_map_lookup_elem(&sc_lat, &idx);
    if (!v)
        return 0;
    hist_add(&v->hist, delta);
    if (ret < 0)
        __sync_fetch_and_add(&v->errors, 1);
    count(LS_C_SYSCALL_EVENTS);
    return 0;
}

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
