/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Lock names (--lock-names), included by wait.bpf.c. A contended lock's
 * address is classified once, at the first contention_begin that sees it:
 * the waiter's own mm's mmap_lock and its siglock, this CPU's run-queue lock,
 * else the slab cache of the object it lives in (bpf_get_kmem_cache, a kfunc
 * of 6.13+ kernels, tp_btf only). An address with no name is kept too (an
 * empty name), so the look-ups run once per address, not per wait.
 * Keys stay the caller's: a name says which lock, a key matches across builds.
 */
#ifndef LOCKSCOPE_LOCK_NAME_BPF_H
#define LOCKSCOPE_LOCK_NAME_BPF_H

#include "common.bpf.h"

extern struct kmem_cache *bpf_get_kmem_cache(__u64 addr) __ksym __weak;

const volatile bool lock_names = false;

struct {
    __uint(type, BPF_MAP_TYPE_HASH);
    __type(key, __u64);
    __type(value, struct ls_lock_name);
    __uint(max_entries, 16384);
} names SEC(".maps");

/* Too big for the BPF stack next to on_begin's own. */
struct {
    __uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
    __type(key, __u32);
    __type(value, struct ls_lock_name);
    __uint(max_entries, 1);
} name_scratch SEC(".maps");

static __always_inline void name_set(struct ls_lock_name *n, const char *s, __u32 len)
{
    for (__u32 i = 0; i < LS_LOCK_NAME_LEN; i++) {
        if (i >= len)
            break;
        n->name[i] = s[i];
    }
}

/*
 * This CPU's run-queue lock, reached through the current task's cfs_rq
 * (CONFIG_FAIR_GROUP_SCHED). Not through the runqueues per-CPU variable: a
 * typed ksym needs its address from kallsyms, which has no data symbols on
 * kernels without KALLSYMS_ALL (this host), and the program would not load.
 * Like perf, only the current CPU's lock is recognised.
 */
static __always_inline bool this_rq_lock(__u64 lock)
{
    struct task_struct *task = (struct task_struct *)bpf_get_current_task();
    struct cfs_rq *cfs;
    struct rq *rq;

    if (!bpf_core_field_exists(task->se.cfs_rq) || !bpf_core_field_exists(((struct cfs_rq *)0)->rq) ||
        !bpf_core_field_exists(((struct rq *)0)->__lock))
        return false;
    cfs = BPF_CORE_READ(task, se.cfs_rq);
    if (!cfs)
        return false;
    rq = BPF_CORE_READ(cfs, rq);
    return rq && (__u64)&rq->__lock == lock;
}

/* "&task_struct": the slab cache of the object holding lock (perf's spelling). */
static __always_inline bool slab_name(struct ls_lock_name *n, __u64 lock)
{
    struct kmem_cache *cache;
    const char *cname;

    if (!bpf_get_kmem_cache)
        return false;
    cache = bpf_get_kmem_cache(lock);
    if (!cache)
        return false;
    cname = BPF_CORE_READ(cache, name);
    if (!cname)
        return false;
    n->name[0] = '&';
    return bpf_probe_read_kernel_str(&n->name[1], LS_LOCK_NAME_LEN - 1, cname) > 1;
}

/* kfuncs: the tp_btf hook only (BTF-typed programs). */
static __always_inline void name_lock(__u64 lock, __u32 flags, bool kfuncs)
{
    struct task_struct *task = (struct task_struct *)bpf_get_current_task();
    struct ls_lock_name *n;
    struct mm_struct *mm;
    struct sighand_struct *sh;
    bool spin = (flags & LS_LCB_F_SPIN) && !(flags & LS_LCB_F_MUTEX);
    __u32 zero = 0;
    long err;

    n = bpf_map_lookup_elem(&names, &lock);
    if (n) {
        /* Another CPU's rq lock is seen unnamed first; named once its own CPU waits on it. */
        if (!n->name[0] && spin && this_rq_lock(lock))
            name_set(n, "rq_lock", sizeof("rq_lock"));
        return;
    }
    n = bpf_map_lookup_elem(&name_scratch, &zero);
    if (!n)
        return;
    __builtin_memset(n, 0, sizeof(*n));
    mm = BPF_CORE_READ(task, mm);
    sh = BPF_CORE_READ(task, sighand);
    if (mm && bpf_core_field_exists(mm->mmap_lock) && (__u64)&mm->mmap_lock == lock)
        name_set(n, "mmap_lock", sizeof("mmap_lock"));
    else if (sh && (__u64)&sh->siglock == lock)
        name_set(n, "siglock", sizeof("siglock"));
    else if (spin && this_rq_lock(lock))
        name_set(n, "rq_lock", sizeof("rq_lock"));
    else if (kfuncs)
        slab_name(n, lock);
    /* Only a full map loses a name: a busy bucket or an empty element
     * cache (a drain just deleted names) costs this look-up alone, no wait,
     * and the lock's next timed begin names it. */
    err = bpf_map_update_elem(&names, &lock, n, BPF_NOEXIST);
    if (err == -E2BIG)
        count(LS_C_MAP_FULL);
}

#endif /* LOCKSCOPE_LOCK_NAME_BPF_H */
