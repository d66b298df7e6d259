// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Latency of kernel functions that take IPC and timer object locks
 * (__lock_timer, ipc_lock, ipc_obtain_object_check, sem_lock, ...). Which
 * functions exist changes between kernel builds, so the programs are generic
 * slots: userspace points slot i at function i (bpf_program__set_attach_target
 * for fentry/fexit, the attach call for kprobes) and disables the rest.
 * Entry and exit are paired per (thread, slot) in task storage (one function
 * may call another), and each CPU keeps its own histograms: a call costs no
 * hash-map update and delete (whose bucket locks the hold probe saw as locks
 * of ours) and no shared cache line.
 */
#include "common.bpf.h"

char LICENSE[] SEC("license") = "Dual BSD/GPL";

struct fn_task {
    __u64 ts[LS_MAX_FUNCS]; /* entry time of the slot's call in progress; 0: none */
};

struct {
    __uint(type, BPF_MAP_TYPE_TASK_STORAGE);
    __uint(map_flags, BPF_F_NO_PREALLOC);
    __type(key, int);
    __type(value, struct fn_task);
} fn_tasks SEC(".maps");

/*
 * Per CPU, summed by userspace; a slot's min is unset while its count is 0.
 * Drained per window (fn_halves): two halves of LS_MAX_FUNCS slots, filed
 * in half fn_gen & 1 and read out as syscalls.bpf.c's sc_lat is.
 */
struct {
    __uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
    __type(key, __u32);
    __type(value, struct ls_lat_val);
    __uint(max_entries, 2 * LS_MAX_FUNCS);
} fn_lat SEC(".maps");

const volatile bool fn_halves = false;
volatile __u32 fn_gen;

static __always_inline int fn_enter(__u32 slot)
{
    if (!task_wanted())
        return 0;
    struct fn_task *t = bpf_task_storage_get(&fn_tasks, bpf_get_current_task_btf(), 0,
                                             BPF_LOCAL_STORAGE_GET_F_CREATE);

    if (!t) {
        count(LS_C_MAP_FULL);
        return 0;
    }
    t->ts[slot & (LS_MAX_FUNCS - 1)] = bpf_ktime_get_ns();
    return 0;
}

static __always_inline int fn_exit(__u32 slot)
{
    struct fn_task *t = bpf_task_storage_get(&fn_tasks, bpf_get_current_task_btf(), 0, 0);
    __u32 i = slot & (LS_MAX_FUNCS - 1);

    if (!t || !t->ts[i])
        return 0;
    __u64 delta = bpf_ktime_get_ns() - t->ts[i];

    t->ts[i] = 0;
    __u32 key = fn_halves ? i + (fn_gen & 1) * LS_MAX_FUNCS : i;
    struct ls_lat_val *v = bpf_map_lookup_elem(&fn_lat, &key);

    if (!v)
        return 0;
    hist_add_cpu(&v->hist, delta);
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
