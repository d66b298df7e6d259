/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Helpers and maps every probe family shares. The maps declared here are
 * created once by userspace and handed to each skeleton (bpf_map__reuse_fd),
 * so stack ids, filters and counters are common to all families.
 */
#ifndef LOCKSCOPE_COMMON_BPF_H
#define LOCKSCOPE_COMMON_BPF_H

#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>

#include "lockscope_bpf.h"

/* Set by userspace before load; the verifier then prunes disabled branches. */
const volatile bool filter_comm_on = false;
const volatile bool filter_addr_on = false;
const volatile char filter_comm[LS_COMM_LEN] = {};
const volatile __u32 filter_flags_mask = 0;
const volatile bool per_tgid = false;
const volatile bool per_cgroup = false; /* key waits by the waiter's cgroup v2 id */
/* Options::cgroup: only tasks in this cgroup v2 (id) or below it, which sits
 * filter_cgroup_level levels under the root. */
const volatile __u64 filter_cgroup = 0;
const volatile __u32 filter_cgroup_level = 0;
const volatile bool stacks_on = true; /* Options::stack_depth > 0 */
const volatile __u32 stack_tag = LS_STACKS_WAIT; /* which shared stack map "stacks" is here */
const volatile bool user_stacks_on = false; /* Options::user_stacks: kernel events take user stacks too */

/* The initial value of a fresh histogram: min must start above any value. */
const volatile struct ls_hist hist_template = { .min = ~0ULL };

struct {
    __uint(type, BPF_MAP_TYPE_STACK_TRACE);
    __uint(key_size, sizeof(__u32));
    __uint(value_size, 127 * sizeof(__u64));
    __uint(max_entries, 1); /* replaced by the userspace-created map */
} stacks SEC(".maps");

/* LS_STACKS_SPILL (lockscope_bpf.h), likewise replaced. */
struct {
    __uint(type, BPF_MAP_TYPE_STACK_TRACE);
    __uint(key_size, sizeof(__u32));
    __uint(value_size, 127 * sizeof(__u64));
    __uint(max_entries, 1);
} stacks_spill SEC(".maps");

struct {
    __uint(type, BPF_MAP_TYPE_HASH);
    __type(key, __u32);
    __type(value, __u8);
    __uint(max_entries, 1);
} filter_tgids SEC(".maps");

struct {
    __uint(type, BPF_MAP_TYPE_HASH);
    __type(key, __u64);
    __type(value, __u8);
    __uint(max_entries, 1);
} filter_addrs SEC(".maps");

struct {
    __uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
    __type(key, __u32);
    __type(value, __u64);
    __uint(max_entries, LS_C_NR);
} counters SEC(".maps");

/* Runtime switches userspace flips after load, indexed by enum ls_runtime_slot. */
struct {
    __uint(type, BPF_MAP_TYPE_ARRAY);
    __type(key, __u32);
    __type(value, __u32);
    __uint(max_entries, LS_RT_NR);
} runtime SEC(".maps");

static __always_inline bool runtime_on(enum ls_runtime_slot slot)
{
    __u32 key = slot;
    __u32 *on = bpf_map_lookup_elem(&runtime, &key);

    return on && *on;
}

static __always_inline bool tgid_filter_on(void)
{
    return runtime_on(LS_RT_TGID_FILTER);
}

static __always_inline void count_n(enum ls_counter c, __u64 n)
{
    __u32 key = c;
    __u64 *v = bpf_map_lookup_elem(&counters, &key);

    /* Per-CPU, but an irq or NMI may interrupt us on the same CPU. */
    if (v)
        __sync_fetch_and_add(v, n);
}

static __always_inline void count(enum ls_counter c)
{
    count_n(c, 1);
}

#ifndef EBUSY
#define EBUSY 16
#endif
#ifndef EDEADLK
#define EDEADLK 35
#endif
#ifndef ETIMEDOUT
#define ETIMEDOUT 110
#endif
#ifndef ENOMEM
#define ENOMEM 12
#endif
#ifndef E2BIG
#define E2BIG 7
#endif
#ifndef EEXIST
#define EEXIST 17
#endif

/*
 * Counts n events lost because a hash map update failed with err. A busy
 * bucket is not a full map: the bucket's lock was already held on this CPU
 * by what the program interrupted (a userspace map syscall such as a
 * drain's lookup-and-delete, or another program). Kernels before 6.15 say
 * -EBUSY (htab's map_locked); rqspinlock kernels say -EDEADLK (AA) or
 * -ETIMEDOUT. Nor is -ENOMEM: a map that is not preallocated takes a new
 * element from a per-CPU cache refilled asynchronously, which a burst of
 * new keys in atomic context can empty (e.g. right after a drain deleted
 * every key). Each is counted apart.
 */
static __always_inline void map_miss_n(long err, __u64 n)
{
    enum ls_counter c = LS_C_MAP_FULL;

    if (err == -EBUSY || err == -EDEADLK || err == -ETIMEDOUT)
        c = LS_C_MAP_BUSY;
    else if (err == -ENOMEM)
        c = LS_C_MAP_NOMEM;
    count_n(c, n);
}

/* Charges one wait to a holder or owner entry (struct ls_holder_val) of map,
 * creating it at zero first. Only for programs allowed to update hash maps
 * (not the spin-lock hold probes: a bucket lock would re-enter them). */
static __always_inline void charge_holder(void *map, const void *key, __u64 wait_ns)
{
    struct ls_holder_val zero = {}, *v = bpf_map_lookup_elem(map, key);

    if (!v) {
        long err = bpf_map_update_elem(map, key, &zero, BPF_NOEXIST);

        v = bpf_map_lookup_elem(map, key);
        if (!v) {
            map_miss_n(err, 1);
            return;
        }
    }
    __sync_fetch_and_add(&v->count, 1);
    __sync_fetch_and_add(&v->wait_ns, wait_ns);
}

/* The current task's comm equals filter_comm (a thread can rename itself, so
 * callers check this on every event). */
static __always_inline bool comm_wanted(void)
{
    char comm[LS_COMM_LEN];

    bpf_get_current_comm(comm, sizeof(comm));
    for (int i = 0; i < LS_COMM_LEN; i++) {
        if (comm[i] != filter_comm[i])
            return false;
        if (!comm[i])
            break;
    }
    return true;
}

/* An ancestor's id, not the task's own: a container's tasks often sit in
 * child cgroups of the one named. */
static __always_inline bool cgroup_wanted(void)
{
    return !filter_cgroup || bpf_get_current_ancestor_cgroup_id(filter_cgroup_level) == filter_cgroup;
}

/* tgid_known: the caller already found the task's tgid in the filter (a
 * tgid leaves it only once its last thread has exited). */
static __always_inline bool task_wanted_as(bool tgid_known)
{
    if (!cgroup_wanted())
        return false;
    if (!tgid_known && tgid_filter_on()) {
        __u32 tgid = bpf_get_current_pid_tgid() >> 32;

        if (!bpf_map_lookup_elem(&filter_tgids, &tgid))
            return false;
    }
    return !filter_comm_on || comm_wanted();
}

static __always_inline bool task_wanted(void)
{
    return task_wanted_as(false);
}

static __always_inline bool lock_wanted(__u64 lock)
{
    if (filter_addr_on && !bpf_map_lookup_elem(&filter_addrs, &lock))
        return false;
    return true;
}

/* floor(log2(v)) with bucket 0 = {0,1}, as lockscope::Log2Hist::bucketOf. */
static __always_inline __u32 log2_bucket(__u64 v)
{
    __u32 r = 0, shift;

    shift = (v > 0xffffffffULL) << 5; v >>= shift; r |= shift;
    shift = (v > 0xffff) << 4; v >>= shift; r |= shift;
    shift = (v > 0xff) << 3; v >>= shift; r |= shift;
    shift = (v > 0xf) << 2; v >>= shift; r |= shift;
    shift = (v > 0x3) << 1; v >>= shift; r |= shift;
    r |= (v >> 1);
    return r;
}

/* Lock-free: several CPUs (or an irq on this one) may add concurrently. */
static __always_inline void hist_add(struct ls_hist *h, __u64 v)
{
    __u32 b = log2_bucket(v);

    /*
     * The 6.1 verifier loses the bound of log2_bucket's OR chain, and clang
     * folds the mask into the last OR operand only. The empty asm makes b
     * opaque so the mask bounds the finished index (6.1 rejected wait_end
     * with "math between map_value pointer and register with unbounded min").
     */
    asm volatile("" : "+r"(b));
    b &= LS_HIST_SLOTS - 1;
    __sync_fetch_and_add(&h->slots[b], 1);
    __sync_fetch_and_add(&h->total, v);
    __sync_fetch_and_add(&h->count, 1);
    for (int i = 0; i < 4; i++) {
        __u64 old = h->min;

        if (v >= old || __sync_val_compare_and_swap(&h->min, old, v) == old)
            break;
    }
    for (int i = 0; i < 4; i++) {
        __u64 old = h->max;

        if (v <= old || __sync_val_compare_and_swap(&h->max, old, v) == old)
            break;
    }
}

/*
 * Plain stores into this CPU's copy of a per-CPU value, which nothing else
 * writes meanwhile: no locked instruction and no cache line shared between
 * CPUs. A copy's min is unset while its count is 0 (a per-CPU element created
 * on one CPU is zero on the others); userspace sums the copies.
 */
static __always_inline void hist_add_cpu(struct ls_hist *h, __u64 v)
{
    __u32 b = log2_bucket(v);

    /* Opaque to the verifier so the mask bounds the finished index (6.1). */
    asm volatile("" : "+r"(b));
    b &= LS_HIST_SLOTS - 1;
    h->slots[b] += 1;
    h->total += v;
    if (!h->count || v < h->min)
        h->min = v;
    if (v > h->max)
        h->max = v;
    h->count += 1;
}

/* hist_add_cpu for an event already counted: its time only. A copy's min
 * is unset while it holds no time (max 0). */
static __always_inline void hist_add_time_cpu(struct ls_hist *h, __u64 v)
{
    __u32 b = log2_bucket(v);

    asm volatile("" : "+r"(b));
    b &= LS_HIST_SLOTS - 1;
    h->slots[b] += 1;
    h->total += v;
    if (!h->max || v < h->min)
        h->min = v;
    if (v > h->max)
        h->max = v;
}

/* Adds a timed event standing for w events to a weighted histogram (this
 * CPU's copy): its bucket and time w times, count the sum of the weights;
 * min and max the events' own (min unset while max is 0). */
static __always_inline void weighted_add(struct ls_hist *h, __u64 v, __u32 w)
{
    __u32 b = log2_bucket(v);

    /* Opaque to the verifier so the mask bounds the finished index (6.1). */
    asm volatile("" : "+r"(b));
    b &= LS_HIST_SLOTS - 1;
    h->slots[b] += w;
    h->total += v * w;
    h->count += w;
    if (!h->max || v < h->min)
        h->min = v;
    if (v > h->max)
        h->max = v;
}

/* Finds or creates the histogram of key in a hash map; NULL when it cannot
 * (full or busy), with the n events that carried it counted as lost. */
static __always_inline struct ls_hist *hist_of_n(void *map, const void *key, __u64 n)
{
    struct ls_hist *h = bpf_map_lookup_elem(map, key);
    long err;

    if (h)
        return h;
    /* -EEXIST means another CPU created it meanwhile: fine. */
    err = bpf_map_update_elem(map, key, (const void *)&hist_template, BPF_NOEXIST);
    h = bpf_map_lookup_elem(map, key);
    if (!h)
        map_miss_n(err, n);
    return h;
}

static __always_inline struct ls_hist *hist_of(void *map, const void *key)
{
    return hist_of_n(map, key, 1);
}

/*
 * bpf_get_stackid stores a new stack in a bucket popped from the stack map's
 * per-CPU freelist under a raw spinlock (kernel/bpf/percpu_freelist.c, a
 * plain raw_spin_lock before 6.4's rqspinlock work). When the hold probes are
 * attached to _raw_spin_lock itself, that lock fires another hold program
 * (fentry/fexit recursion protection is per program, so hold_lock_irqsave's
 * stack walk fires hold_lock), which walks a stack and pops the same
 * freelist again: an AA deadlock with interrupts off ("0 ticks this GP" RCU
 * stalls on the Debian 6.1 guests). A per-CPU busy flag, in the shared
 * counters map so every skeleton sees it, makes a nested walk give up the
 * stack instead of the lock.
 */
static __always_inline __s32 stack_id(void *ctx, __u64 flags)
{
    __u32 busy_key = LS_C_STACK_BUSY;
    __u32 tag = stack_tag;
    __u64 *busy;
    long id;

    if (!stacks_on)
        return -1;
    busy = bpf_map_lookup_elem(&counters, &busy_key);
    if (!busy)
        return -1;
    if (*busy) {
        if (tag != LS_STACKS_CPU)
            count(LS_C_STACK_NESTED);
        return -1;
    }
    *busy = 1;
    id = bpf_get_stackid(ctx, &stacks, flags);
    if (id == -EEXIST && tag != LS_STACKS_CPU) {
        tag = LS_STACKS_SPILL;
        id = bpf_get_stackid(ctx, &stacks_spill, flags);
    }
    *busy = 0;

    /* The CPU sampler counts a sample it keeps no stack for itself
     * (LS_C_CPU_UNSTACKED): the failure counters are lock events' call paths. */
    if (id < 0) {
        if (tag != LS_STACKS_CPU) {
            count(LS_C_STACK_FAIL);
            if (id == -EEXIST)
                count(LS_C_STACK_COLLIDED);
        }
        return -1;
    }
    if (tag == LS_STACKS_SPILL)
        count(LS_C_STACK_SPILLED);
    return (__s32)((__u32)id | (tag << LS_STACK_TAG_SHIFT));
}

#define LS_PF_KTHREAD 0x00200000 /* include/linux/sched.h; macros are not in vmlinux.h */

/*
 * The user stack of the task a kernel event happens in (Options::user_stacks),
 * walked from the registers it entered the kernel with. Kernel threads have
 * none: asking would only count a stack failure.
 */
static __always_inline __s32 user_stack_id(void *ctx)
{
    struct task_struct *task;

    if (!user_stacks_on)
        return -1;
    task = (struct task_struct *)bpf_get_current_task();
    if (BPF_CORE_READ(task, flags) & LS_PF_KTHREAD)
        return -1;
    return stack_id(ctx, BPF_F_USER_STACK);
}

#endif /* LOCKSCOPE_COMMON_BPF_H */
