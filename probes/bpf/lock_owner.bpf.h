/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Lock owners (--lock-owner), included by wait.bpf.c. A mutex and a
 * writer-owned rwsem name their owner task in the lock word; a sleeping wait
 * reads it at contention_begin, with the owner's kernel stack at that moment
 * (where the holder was), and contention_end charges the wait to both.
 * Racy by nature, as the kernel's own reads of the owner are: the owner may
 * let go just as the wait begins.
 */
#ifndef LOCKSCOPE_LOCK_OWNER_BPF_H
#define LOCKSCOPE_LOCK_OWNER_BPF_H

#include "common.bpf.h"

/* Low bits of the owner word that are flags, not pointer bits:
 * kernel/locking/mutex.h MUTEX_FLAGS, kernel/locking/rwsem.c
 * RWSEM_OWNER_FLAGS_MASK (task_structs are aligned well past 8). */
#define LS_MUTEX_FLAGS 0x07UL
#define LS_RWSEM_OWNER_FLAGS 0x07UL
#define LS_RWSEM_READER_OWNED 0x01UL

extern struct task_struct *bpf_task_from_pid(s32 pid) __ksym __weak;
extern void bpf_task_release(struct task_struct *p) __ksym __weak;

const volatile bool owner_scan = false;

/*
 * The generation new owner entries are charged to. A drain (lock_owners.cpp)
 * moves it on, waits until no program that read the old one still runs
 * (an RCU grace period), then takes the old generation's entries: nothing
 * adds to them any more, so each charge is read exactly once.
 */
volatile __u32 owner_gen;

struct {
    __uint(type, BPF_MAP_TYPE_HASH);
    __type(key, struct ls_owner_key);
    __type(value, struct ls_holder_val);
    __uint(max_entries, 16384);
} owners SEC(".maps");

/* Owner stacks by the hash of their addresses: each distinct stack once. */
struct {
    __uint(type, BPF_MAP_TYPE_HASH);
    __type(key, __u64);
    __type(value, struct ls_owner_stack);
    __uint(max_entries, 4096);
} owner_stacks SEC(".maps");

/* The owners' names, by tid, as they were when last seen owning. */
struct {
    __uint(type, BPF_MAP_TYPE_HASH);
    __type(key, __u32);
    __type(value, struct ls_owner_comm);
    __uint(max_entries, 4096);
} owner_comms SEC(".maps");

/* Too big for the BPF stack. */
struct {
    __uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
    __type(key, __u32);
    __type(value, struct ls_owner_stack);
    __uint(max_entries, 1);
} owner_scratch SEC(".maps");

/* Sleeping rwsem waits: rwlocks spin, percpu-rwsems and rtmutexes keep no owner word like this. */
static __always_inline bool rwsem_wait(__u32 flags)
{
    return (flags & (LS_LCB_F_READ | LS_LCB_F_WRITE))
        && !(flags & (LS_LCB_F_SPIN | LS_LCB_F_RT | LS_LCB_F_PERCPU | LS_LCB_F_MUTEX));
}

/* The owner task named by the lock word, or NULL (none, reader-owned, not an owning kind). */
static __always_inline struct task_struct *owner_of(__u64 lock, __u32 flags)
{
    unsigned long word;

    if (flags & LS_LCB_F_MUTEX) {
        struct mutex *m = (struct mutex *)lock;

        if (!bpf_core_field_exists(m->owner)) /* PREEMPT_RT: an rtmutex inside */
            return NULL;
        word = BPF_CORE_READ(m, owner.counter);
        word &= ~LS_MUTEX_FLAGS;
    } else if (rwsem_wait(flags)) {
        struct rw_semaphore *s = (struct rw_semaphore *)lock;

        if (!bpf_core_field_exists(s->owner))
            return NULL;
        word = BPF_CORE_READ(s, owner.counter);
        if (word & LS_RWSEM_READER_OWNED) /* the last reader, maybe long gone */
            return NULL;
        word &= ~LS_RWSEM_OWNER_FLAGS;
    } else {
        return NULL;
    }
    return (struct task_struct *)word;
}

/* Walks the owner's kernel stack and interns it; returns its key, 0 if none. */
static __always_inline __u64 owner_stack_of(__u32 tid)
{
    struct ls_owner_stack *s;
    struct task_struct *t;
    __u32 zero = 0;
    __u64 h = 0xcbf29ce484222325ULL;
    long n;

    if (!bpf_task_from_pid) /* older kernels: weak, resolved to 0 */
        return 0;
    s = bpf_map_lookup_elem(&owner_scratch, &zero);
    if (!s)
        return 0;
    t = bpf_task_from_pid((s32)tid);
    if (!t)
        return 0; /* exited meanwhile */
    n = bpf_get_task_stack(t, s->ips, sizeof(s->ips), 0);
    bpf_task_release(t);
    if (n <= 0) {
        count(LS_C_STACK_FAIL);
        return 0;
    }
    s->nr = (__u32)(n / sizeof(__u64));
    for (__u32 i = 0; i < LS_OWNER_DEPTH; i++) {
        if (i >= s->nr)
            break;
        h = (h ^ s->ips[i]) * 0x100000001b3ULL;
    }
    h |= 1; /* 0 means "no stack" */
    /* Present, or else a drain has just moved it out between the two
     * calls: stored again then. */
    if (bpf_map_update_elem(&owner_stacks, &h, s, BPF_NOEXIST) != 0
        && !bpf_map_lookup_elem(&owner_stacks, &h)
        && bpf_map_update_elem(&owner_stacks, &h, s, BPF_NOEXIST) != 0) {
        count(LS_C_MAP_FULL);
        return 0;
    }
    return h;
}

/*
 * Fills the pending wait's owner. with_stack: the tp_btf hook only (kfuncs
 * are for BTF-typed programs), and not while the mutex's waiter spins: it
 * spins only while the owner runs, and a running task's stack is being
 * rewritten under the walk. The owner's walk costs what the wait's own does
 * (stack_budget.bpf.h), so it rides on the wait's budget: e->kstack must
 * already say whether this wait was walked, and a wait that was not walks
 * no owner either (counted). That keeps walks per CPU window at most twice
 * the budget without a second set of window state, and an owner stack
 * still lands beside a known wait path.
 */
static __always_inline void read_owner(struct ls_pending *e, __u64 lock, __u32 flags, bool with_stack)
{
    struct ls_owner_comm c = {};
    struct task_struct *t;
    __u32 tid;

    e->owner_tid = 0;
    e->owner_stack = 0;
    t = owner_of(lock, flags);
    if (!t)
        return;
    tid = (__u32)BPF_CORE_READ(t, pid);
    if (!tid)
        return;
    e->owner_tid = tid;
    BPF_CORE_READ_STR_INTO(&c.comm, t, comm);
    bpf_map_update_elem(&owner_comms, &tid, &c, BPF_ANY);
    if (!with_stack || (flags & LS_LCB_F_SPIN) || !stacks_on)
        return;
    if (e->kstack == LS_STACK_UNSAMPLED) {
        count(LS_C_OWNER_STACK_UNSAMPLED);
        return;
    }
    e->owner_stack = owner_stack_of(tid);
}

static __always_inline void owner_add(const struct ls_wait_done *w)
{
    struct ls_owner_key key = {
        .lock = w->lock,
        .wait_kstack = w->kstack,
        .tgid = w->tgid,
        .owner_tid = w->owner_tid,
        .owner_stack = w->owner_stack,
        .cgroup = w->cgroup,
        .gen = owner_gen,
    };

    charge_holder(&owners, &key, w->delta);
}

#endif /* LOCKSCOPE_LOCK_OWNER_BPF_H */
