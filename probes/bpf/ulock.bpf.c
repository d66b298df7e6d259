// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Userspace locks via uprobes: wait = lock() entry -> return (when it returns
 * 0), hold = lock() return -> unlock() entry of the same lock by the same
 * thread (pthread mutexes are unlocked by their owner). The attach cookie is
 * the index of the UserLockSpec, so one program serves every spec.
 */
#include "common.bpf.h"

char LICENSE[] SEC("license") = "Dual BSD/GPL";

struct ul_pending {
    __u64 lock;
    __u64 ts;
};

struct {
    __uint(type, BPF_MAP_TYPE_HASH);
    __type(key, __u32);
    __type(value, struct ul_pending);
    __uint(max_entries, 16384);
} ul_waiting SEC(".maps");

struct {
    __uint(type, BPF_MAP_TYPE_HASH);
    __type(key, struct ls_ul_held_key);
    __type(value, struct ls_ul_held);
    __uint(max_entries, 65536);
} ul_holding SEC(".maps");

/*
 * Filed under generation ul_gen & 1 (the key's gen): lockscope agent reads a
 * window out by moving ul_gen on, waiting until no program that read the old
 * value still runs, then taking the old generation's entries and emptying
 * them in place (as wait.bpf.c's waits). Never moves unless drained.
 */
volatile __u32 ul_gen;

struct {
    __uint(type, BPF_MAP_TYPE_HASH);
    __type(key, struct ls_ulock_key);
    __type(value, struct ls_hist);
    __uint(max_entries, 16384);
} ul_waits SEC(".maps");

struct {
    __uint(type, BPF_MAP_TYPE_HASH);
    __type(key, struct ls_ulock_key);
    __type(value, struct ls_hist);
    __uint(max_entries, 16384);
} ul_holds SEC(".maps");

SEC("uprobe")
int BPF_KPROBE(ulock_enter, void *lock)
{
    if (!task_wanted() || !lock_wanted((__u64)lock))
        return 0;
    __u32 tid = (__u32)bpf_get_current_pid_tgid();
    struct ul_pending p = { .lock = (__u64)lock, .ts = bpf_ktime_get_ns() };

    if (bpf_map_update_elem(&ul_waiting, &tid, &p, BPF_ANY))
        count(LS_C_MAP_FULL);
    return 0;
}

SEC("uretprobe")
int BPF_KRETPROBE(ulock_return, long ret)
{
    __u64 now = bpf_ktime_get_ns();
    __u64 id = bpf_get_current_pid_tgid();
    __u32 tid = (__u32)id;
    struct ul_pending *p = bpf_map_lookup_elem(&ul_waiting, &tid);

    if (!p)
        return 0;
    struct ul_pending pend = *p;
    bpf_map_delete_elem(&ul_waiting, &tid);
    if (ret != 0)
        return 0; /* error: not acquired */

    __u32 spec = (__u32)bpf_get_attach_cookie(ctx);
    __s32 ustack = stack_id(ctx, BPF_F_USER_STACK);
    struct ls_ulock_key key = {
        .lock = pend.lock, .ustack = ustack, .spec = spec,
        .tgid = (__u32)(id >> 32), .gen = ul_gen & 1,
        .cgroup = per_cgroup ? bpf_get_current_cgroup_id() : 0,
    };
    struct ls_hist *h = hist_of(&ul_waits, &key);
    if (h)
        hist_add(h, now - pend.ts);
    count(LS_C_ULOCK_EVENTS);

    struct ls_ul_held_key hk = { .lock = pend.lock, .tid = tid };
    struct ls_ul_held hv = { .ts = bpf_ktime_get_ns(), .ustack = ustack, .spec = spec };
    if (bpf_map_update_elem(&ul_holding, &hk, &hv, BPF_ANY))
        count(LS_C_MAP_FULL);
    return 0;
}

SEC("uprobe")
int BPF_KPROBE(uunlock_enter, void *lock)
{
    __u64 now = bpf_ktime_get_ns();
    __u64 id = bpf_get_current_pid_tgid();
    struct ls_ul_held_key hk = { .lock = (__u64)lock, .tid = (__u32)id };
    struct ls_ul_held *hv = bpf_map_lookup_elem(&ul_holding, &hk);

    if (!hv) {
        if (task_wanted() && lock_wanted((__u64)lock))
            count(LS_C_ULOCK_UNMATCHED);
        return 0;
    }
    struct ls_ulock_key key = {
        .lock = (__u64)lock, .ustack = hv->ustack, .spec = hv->spec,
        .tgid = (__u32)(id >> 32), .gen = ul_gen & 1,
        .cgroup = per_cgroup ? bpf_get_current_cgroup_id() : 0,
    };
    __u64 ts = hv->ts;

    bpf_map_delete_elem(&ul_holding, &hk);
    /* A stamp after this unlock began cannot be this thread's acquisition
     * (e.g. a lock() of the same address from a signal handler between the
     * two reads): dropped and counted, as kernel holds are (hold_close). */
    if (now < ts) {
        count(LS_C_HOLD_IMPOSSIBLE);
        return 0;
    }
    struct ls_hist *h = hist_of(&ul_holds, &key);
    if (h)
        hist_add(h, now - ts);
    count(LS_C_ULOCK_EVENTS);
    return 0;
}
