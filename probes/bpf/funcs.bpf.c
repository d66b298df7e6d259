// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Latency of kernel functions that take IPC and timer object locks
 * (__lock_timer, ipc_lock, ipc_obtain_object_check, sem_lock, ...). Which
 * functions exist changes between kernel builds, so the programs are generic
 * slots: userspace points slot i at function i (bpf_program__set_attach_target
 * for fentry/fexit, the attach call for kprobes) and disables the rest.
 * Entry and exit are paired per (thread, slot): one function may call another.
 */
#include "common.bpf.h"

char LICENSE[] SEC("license") = "Dual BSD/GPL";

struct fn_key {
    __u32 tid;
    __u32 slot;
};

struct {
    __uint(type, BPF_MAP_TYPE_HASH);
    __type(key, struct fn_key);
    __type(value, __u64);
    __uint(max_entries, 16384);
} fn_starts SEC(".maps");

struct {
    __uint(type, BPF_MAP_TYPE_ARRAY);
    __type(key, __u32);
    __type(value, struct ls_lat_val);
    __uint(max_entries, LS_MAX_FUNCS);
} fn_lat SEC(".maps");

static __always_inline int fn_enter(__u32 slot)
{
    if (!task_wanted())
        return 0;
    struct fn_key k = { .tid = (__u32)bpf_get_current_pid_tgid(), .slot = slot };
    __u64 ts = bpf_ktime_get_ns();

    if (bpf_map_update_elem(&fn_starts, &k, &ts, BPF_ANY))
        count(LS_C_MAP_FULL);
    return 0;
}

static __always_inline int fn_exit(__u32 slot)
{
    struct fn_key k = { .tid = (__u32)bpf_get_current_pid_tgid(), .slot = slot };
    __u64 *ts = bpf_map_lookup_elem(&fn_starts, &k);

    if (!ts)
        return 0;
    __u64 delta = bpf_ktime_get_ns() - *ts;
    bpf_map_delete_elem(&fn_starts, &k);
    struct ls_lat_val *v = bpf_map_lookup_elem(&fn_lat, &slot);
    if (!v)
        return 0;
    hist_add(&v->hist, delta);
    count(LS_C_FUNC_EVENTS);
    return 0;
}

#define FN_SLOT(i)                                                                     \
    SEC("fentry") int BPF_PROG(fentry_##i) { return fn_enter(i); }                     \
    SEC("fexit") int BPF_PROG(fexit_##i) { return fn_exit(i); }                        \
    SEC("kprobe") int BPF_KPROBE(kprobe_##i) { return fn_enter(i); }                   \
    SEC("kretprobe") int BPF_KRETPROBE(kretprobe_##i) { return fn_exit(i); }

FN_SLOT(0)
FN_SLOT(1)
FN_SLOT(2)
FN_SLOT(3)
FN_SLOT(4)
FN_SLOT(5)
FN_SLOT(6)
FN_SLOT(7)
