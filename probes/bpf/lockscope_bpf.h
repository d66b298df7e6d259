/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Structures shared by the BPF programs and the userspace loader. Every map
 * key and value that crosses the boundary is defined here once, with fixed
 * widths and explicit padding so both compilers agree on the layout.
 */
#ifndef LOCKSCOPE_BPF_H
#define LOCKSCOPE_BPF_H

#ifndef __VMLINUX_H__
#include <linux/types.h>
#endif

#define LS_HIST_SLOTS 64   /* same layout as lockscope::Log2Hist */
#define LS_NEST 4          /* pending contended waits per CPU / per task */
#define LS_HOLD_NEST 8     /* spinlocks held at once per CPU (power of two) */
#define LS_HOLD_TABLE 4096 /* per-CPU open-addressing hold table (power of two) */
#define LS_ACQUIRE_TABLE 1024 /* per-CPU table of slow spin acquisitions (power of two) */
#define LS_HOLD_PROBE 8    /* slots tried before a hold counts as map-full */
#define LS_MAX_FUNCS 8     /* function-latency probe slots */
#define LS_MAX_SYSCALLS 16
#define LS_COMM_LEN 16
#define LS_CPU_LEAF_RANGES 64  /* kernel functions a stackless CPU sample is counted by */
#define LS_HOLDER_MAX_CPUS 128 /* CPUs a contention_begin scans for the holder */
#define LS_RELEASED 8          /* per-CPU ring of recent releases (holder stacks; power of two) */
#define LS_STACK_PENDING (-2)  /* held entry published, its stack walk still running */
#define LS_HOLD_STALE_LOCK 1   /* held entry's lock once a later acquisition showed it stale (no lock lives at 1) */
#define LS_STACK_UNSAMPLED (-3) /* wait whose stack was not walked (Options::stack_sample) */
#define LS_HOLD_SID_UNSAMPLED 0xffff /* hold table key's stack field for LS_STACK_UNSAMPLED (ids + 1 stay below) */
#define LS_WAIT_DONE 4         /* per-CPU ring of ended waits not yet in their histograms (power of two) */

/*
 * Each family walks stacks into its own stack map, named by the top bits of
 * every stack id it hands out. bpf_get_stackid fails (EEXIST) for a stack
 * whose hash bucket already holds a different stack, for good: with one map
 * for all, the thousands of distinct stacks of the CPU sampler and the hold
 * probe took buckets that a few contention stacks then could never get.
 * Within one family the same holds: a long-running reader (lockscope agent)
 * keeps the stacks of its last windows, and a call path that becomes hot
 * later can find its bucket taken by one of them. So a wait or hold stack
 * refused that way goes to a small spill map shared by those families, where
 * only such stacks live (the CPU sampler's do not: one sample more or less
 * without a stack is counted, cpu_unstacked).
 */
/* The stack budget's window (Options::stack_budget is per second). */
#define LS_STACK_WINDOW_NS 10000000ULL

#define LS_STACK_TAG_SHIFT 28
#define LS_STACK_ID_MASK ((1U << LS_STACK_TAG_SHIFT) - 1)
enum ls_stack_map {
    LS_STACKS_WAIT = 0, /* contention waits, user locks, everything else */
    LS_STACKS_HOLD = 1,
    LS_STACKS_CPU = 2,
    LS_STACKS_SPILL = 3, /* wait and hold stacks whose bucket above held another stack */
    LS_STACKS_NR
};
#define LS_STACK_SPILL_ENTRIES 4096
/* The hold table key's 16-bit stack field: 0 no stack, id + 1 for the hold
 * map's ids (below 32768), LS_HOLD_SID_SPILL + id for the spill map's. */
#define LS_HOLD_SID_SPILL 0x8001

/* contention_begin flags, include/trace/events/lock.h */
#define LS_LCB_F_SPIN (1U << 0)
#define LS_LCB_F_READ (1U << 1)
#define LS_LCB_F_WRITE (1U << 2)
#define LS_LCB_F_RT (1U << 3)
#define LS_LCB_F_PERCPU (1U << 4)
#define LS_LCB_F_MUTEX (1U << 5)

/* In ls_wait_key.flags and ls_wait_done.flags, beside the LCB_F_* ones: a
 * wait a tick went by in, timed whatever the budget (wait.bpf.c, so every
 * wait of at least exact_wait_ns). They have a key of their own, out of the
 * sample the untimed waits of the same key are given the times of (which
 * only ever saw no tick); userspace folds them back in. */
#define LS_WAIT_F_TICKED (1U << 31)

/* In ls_wait_key.flags: the timed waits of an untimed wait's key (lock,
 * flags, tgid, cgroup) weighted by the untimed waits each stands for, the
 * distribution userspace gives the untimed ones (wait.bpf.c, weigh_timed).
 * count is the sum of the weights (weighted_add). */
#define LS_WAIT_F_WEIGHTED (1U << 30)

/* In ls_wait_key.flags of the waits map only: the drain generation (the low
 * bit of wait.bpf.c's wait_gen) the entry is filed in. lockscope agent's
 * drains alternate between the two; userspace strips it (waitRecordOf). */
#define LS_WAIT_F_GEN (1U << 29)

/* Hold-probe variants, stored in the flags of a hold record. */
enum ls_hold_variant {
    LS_HOLD_SPIN = 1,
    LS_HOLD_SPIN_IRQ = 2,
    LS_HOLD_SPIN_IRQSAVE = 3,
    LS_HOLD_SPIN_BH = 4,
    LS_HOLD_TRYLOCK = 5,
    LS_HOLD_TRYLOCK_BH = 6,
};

/* Bucket 0 = {0,1}, bucket i = [2^i, 2^(i+1)-1]. min starts at ~0. */
struct ls_hist {
    __u64 count;
    __u64 total;
    __u64 min;
    __u64 max;
    __u64 slots[LS_HIST_SLOTS];
};

struct ls_wait_key {
    __u64 lock;
    __s32 kstack;  /* -1: no stack */
    __u32 flags;   /* LCB_F_* */
    __u32 tgid;    /* 0 unless per-tgid keying is on or a user stack was taken */
    __s32 ustack;  /* user stack of the waiter (--user-stacks); -1: none */
    __u64 cgroup;  /* the waiter's cgroup v2 id with --per-cgroup, else 0 */
};

/* One contended wait that has begun and not ended yet. */
struct ls_pending {
    __u64 lock;
    __u64 ts;
    __s32 kstack;
    __u32 flags;
    __s32 holder;  /* LS_HOLDER_FOUND: the holder's stack id (-1: none taken);
                      LS_HOLDER_PENDING: the holder's CPU */
    __u32 holder_state;
    __s32 ustack;  /* -1: none */
    __u32 tid;     /* the waiter: a spinning task never leaves its CPU, so a
                      per-CPU entry another task ends is stale, not its wait */
    __u32 owner_tid;   /* sleeping locks (--lock-owner): the owner read from the lock word; 0: none */
    __u32 counted;     /* 1: an untimed wait (ls_wait_counts), counted at its begin if it spins
                          (its end only pops it), else at its end. Only lock, tid, flags and
                          (when long waits are timed: exact_wait_ns) ts are set then. */
    __u64 owner_stack; /* key of its stack in owner_stacks; 0: not taken */
    __u32 weight;      /* an unwalked spin timed under the timing budget: the untimed
                          waits of its lock it stands for (wait.bpf.c, weigh_timed); 0: none */
    __u32 begin_tick;  /* the tick count at its begin (exact_wait_ns; low 32 bits) */
};

enum ls_holder_state {
    LS_HOLDER_NONE = 0,  /* not scanned, or no CPU held the lock */
    LS_HOLDER_FOUND,
    LS_HOLDER_PENDING,   /* a CPU held it, its stack walk still running: look in its releases at the end */
};

/*
 * The last few spinlocks a CPU released, with the stack that had taken them
 * (hold probe, --holder-stacks only): where a wait whose holder was still
 * walking its stack at contention_begin finds that stack at contention_end.
 */
struct ls_released {
    __u64 lock;
    __s32 kstack;
    __u32 pad;
};

struct ls_released_ring {
    __u32 next;
    __u32 pad;
    struct ls_released e[LS_RELEASED];
};

/*
 * Holder stacks (--holder-stacks): contended spinlock waits attributed to the
 * stack that held the lock when the wait began.
 */
struct ls_holder_key {
    __u64 lock;
    __s32 wait_kstack;   /* the waiter's stack, as in ls_wait_key */
    __s32 holder_kstack; /* the holder's acquire stack; -1: the holder's stack walk failed */
    __u32 tgid;          /* the waiter's tgid, 0 unless per-tgid keying is on */
    __u32 gen;           /* the drain generation its wait was filed in (LS_WAIT_F_GEN's bit) */
    __u64 cgroup;        /* as in ls_wait_key */
};

struct ls_holder_val {
    __u64 count;
    __u64 wait_ns;
};

/*
 * Lock owners (--lock-owner): sleeping waits (mutex, writer-owned rwsem)
 * attributed to the task the lock word named when the wait began, and to
 * where that task was (its kernel stack, walked by bpf_get_task_stack and
 * kept in owner_stacks under a hash of its addresses).
 */
#define LS_OWNER_DEPTH 32

struct ls_owner_key {
    __u64 lock;
    __s32 wait_kstack;  /* the waiter's stack, as in ls_wait_key */
    __u32 tgid;         /* the waiter's tgid, as in ls_wait_key */
    __u32 owner_tid;
    __u32 gen;          /* owner_gen when charged: a drain takes only past generations */
    __u64 owner_stack;  /* 0: no stack taken */
    __u64 cgroup;       /* as in ls_wait_key */
};

struct ls_owner_stack {
    __u32 nr;
    __u32 pad;
    __u64 ips[LS_OWNER_DEPTH];
};

struct ls_owner_comm {
    char comm[LS_COMM_LEN];
};

/*
 * What a contended lock is, where the wait probe can tell (Options::lock_names):
 * the current task's mm's mmap_lock or its siglock, a CPU's run-queue lock,
 * else the slab cache of the object it lives in ("&task_struct"). Kept once
 * per lock address; global locks are named by userspace from kallsyms.
 */
#define LS_LOCK_NAME_LEN 32

struct ls_lock_name {
    char name[LS_LOCK_NAME_LEN];
};

struct ls_wait_stack {
    __u32 depth;
    __u32 tgid_wanted; /* 1: the task's tgid was found in the tgid filter */
    __u32 epoch;       /* attach_epoch when its entries were pushed (wait.bpf.c) */
    __u32 pad;
    struct ls_pending e[LS_NEST];
};

/* A timed wait that has ended, with everything its histogram and holder entry need. */
struct ls_wait_done {
    __u64 lock;
    __u64 delta;   /* ns */
    __s32 kstack;
    __u32 flags;
    __s32 holder;  /* the holder's stack id when holder_state is LS_HOLDER_FOUND */
    __u32 holder_state;
    __s32 ustack;
    __u32 tgid;    /* as in ls_wait_key */
    __u32 ready;   /* written last: the slot is reserved before it is filled */
    __u32 owner_tid;   /* as in ls_pending */
    __u64 owner_stack;
    __u64 cgroup;  /* as in ls_wait_key */
    __u32 counted; /* 1: an untimed wait found long at its end, already counted at its
                      begin (a spinning one): its histogram takes its time, not its count */
    __u32 weight;  /* as in ls_pending */
};

/*
 * Per CPU: ended waits that contention_end left for the next
 * contention_begin on that CPU to add (wait.bpf.c). Entries [tail, head)
 * are reserved, the ready ones filled; userspace adds what is left after
 * detaching.
 */
struct ls_wait_done_ring {
    __u32 head;
    __u32 tail;
    struct ls_wait_done e[LS_WAIT_DONE];
};

/*
 * Per CPU: untimed waits counted by their begin or their end (wait.bpf.c,
 * one cache each: LS_WAIT_COUNT_CACHES), by their histogram key,
 * direct-mapped like the timing budget's slots. An entry goes to the
 * histogram map when evicted or once its count is large; userspace adds what
 * the entries still hold when it reads the maps.
 */
#define LS_WAIT_COUNT_CACHES 2
#define LS_WAIT_COUNTS 16 /* power of two */

struct ls_wait_count {
    struct ls_wait_key key;
    __u64 count;
};

struct ls_wait_counts {
    struct ls_wait_count e[LS_WAIT_COUNTS];
};

/*
 * Hold table entry. key packs the lock address (low 48 bits; kernel addresses
 * are canonical, the top 16 bits all ones) with (stack id + 1) in the top 16
 * bits, so a slot is claimed by one lock-free cmpxchg of one word.
 */
struct ls_hold_slot {
    __u64 key;
    __u32 variant;
    __u32 pad;
    __u64 cgroup; /* the releasing task's cgroup v2 id with --per-cgroup, else 0 */
    struct ls_hist hist;
};

struct ls_held {
    __u64 lock;
    __u64 ts;
    __s32 kstack;
    __u32 variant;
};

struct ls_held_stack {
    __u32 depth;
    __u32 gen; /* bumped by every push and pop (see on_release in hold_common.bpf.h) */
    struct ls_held e[LS_HOLD_NEST];
};

struct ls_lat_val {
    struct ls_hist hist;
    __u64 errors;
    __u64 calls; /* syscalls: every traced call, timed or sampled out */
    /* Syscalls under a timing budget: each timed call's bucket and time
     * weighted by the calls it stands for (itself and the untimed ones after
     * it); count is the sum of the weights (weighted_add). */
    struct ls_hist weighted;
};

struct ls_ulock_key {
    __u64 lock;
    __s32 ustack;
    __u32 spec;    /* index into Options::user_locks */
    __u32 tgid;    /* always set: a user stack is symbolized in its process */
    __u32 gen;     /* ulock.bpf.c's ul_gen & 1 when filed (drained per window) */
    __u64 cgroup;  /* as in ls_wait_key */
};

/* A user lock held now (ulock.bpf.c), by lock and thread. */
struct ls_ul_held_key {
    __u64 lock;
    __u32 tid;
    __u32 pad;
};

struct ls_ul_held {
    __u64 ts;
    __s32 ustack;
    __u32 spec;
};

struct ls_cpu_key {
    __s32 kstack;  /* -1 for samples taken in user mode */
    __u32 pad;
};

/* [begin, end) of a kernel function's code. */
struct ls_ip_range {
    __u64 begin;
    __u64 end;
};

/* Per-CPU counters, summed by userspace. Never silently zero. */
enum ls_counter {
    LS_C_WAIT_EVENTS = 0,
    LS_C_ABORTED,
    LS_C_UNMATCHED,      /* contention_end without a begin */
    LS_C_NEST_OVERFLOW,  /* begin dropped: nesting deeper than LS_NEST */
    LS_C_STALE,          /* begins whose end never came (dropped on a later end) */
    LS_C_MAP_FULL,
    LS_C_STACK_FAIL,     /* lock events' stacks not taken (the CPU sampler's are LS_C_CPU_UNSTACKED) */
    LS_C_HOLD_EVENTS,
    LS_C_HOLD_UNMATCHED, /* unlock of a lock never seen acquired */
    LS_C_HOLD_OVERFLOW,
    LS_C_SYSCALL_EVENTS,
    LS_C_FUNC_EVENTS,
    LS_C_CPU_SAMPLES,
    LS_C_CPU_USER,       /* samples that hit user mode (no kernel stack) */
    LS_C_ULOCK_EVENTS,
    LS_C_ULOCK_UNMATCHED,
    LS_C_FORKS_FOLLOWED,
    LS_C_STACK_NESTED,   /* lock event's stack skipped: a stack walk was already running on this CPU */
    LS_C_HOLDER_MISSING, /* holder scan found no CPU holding the lock (see wait.bpf.c) */
    LS_C_STACK_UNSAMPLED, /* waits whose stack was not walked (stack sampling or budget) */
    LS_C_CPU_UNSTACKED,  /* kernel-mode samples counted by their function alone (no stack kept) */
    LS_C_HOLD_IMPOSSIBLE, /* holds that ended before they began (dropped, see hold_close) */
    LS_C_OWNER_STACK_UNSAMPLED, /* lock owners read whose stack was not walked (the wait's was not) */
    LS_C_HOLD_RACED,     /* pairings an irq moved the held stack under, which the unchecked code got wrong (redone) */
    LS_C_HOLD_STALE,     /* held entries whose release was never seen, found when their lock was taken again */
    LS_C_MAP_BUSY,       /* updates refused: the bucket's lock was held on this CPU (see map_miss_n) */
    LS_C_MAP_NOMEM,      /* updates refused with -ENOMEM: no element memory ready (see map_miss_n) */
    LS_C_WAIT_BEGINS,    /* contention_begin runs before any filter (wait.bpf.c count_begins) */
    LS_C_STACK_COLLIDED, /* of LS_C_STACK_FAIL: -EEXIST, the stack's bucket held another stack, the spill map's too */
    LS_C_STACK_SPILLED,  /* stacks kept in the spill map: their bucket in the family's map held another stack */
    /*
     * Not a counter: per-CPU "a bpf_get_stackid is running" flag (see
     * stack_id in common.bpf.h). It lives here because this map is the one
     * per-CPU array every skeleton shares.
     */
    LS_C_STACK_BUSY,
    LS_C_NR
};

/* Slots of the shared runtime array: switches userspace flips after load. */
enum ls_runtime_slot {
    LS_RT_TGID_FILTER = 0, /* the tgid filter is on */
    LS_RT_HOLDER_SCAN,     /* the hold probe is attached: scan its held stacks */
    LS_RT_NR
};

#endif /* LOCKSCOPE_BPF_H */
