/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Spinlock hold time, shared by the fentry/fexit and kprobe/kretprobe
 * programs. These programs run inside the _raw_spin_lock and _raw_spin_unlock families, so
 * they must never take a lock themselves: a hash map update takes a bucket
 * spinlock, which re-enters these very programs (recursion misses, diverging
 * counts, possible deadlock). Everything here is therefore a lock-free
 * PER-CPU ARRAY:
 *  - held: a small stack of (lock, acquire time, stack id) per CPU. Spinlock
 *    holders do not migrate, so acquire and release happen on one CPU.
 *  - hold_table: an open-addressing table per CPU, keyed by one 64-bit word
 *    (lock address | hold_sid(stack id) << 48) claimed with cmpxchg, holding the
 *    log2 histogram. Userspace sums the CPUs.
 * Hash-map lookups (the filters) are lock-free and allowed; updates are not.
 * bpf_get_stackid takes the stack map's freelist lock for a new stack: that
 * re-enters the hold programs, and stack_id (common.bpf.h) gives up the
 * nested program's stack so it cannot deadlock on the same freelist.
 */
#ifndef LOCKSCOPE_HOLD_COMMON_BPF_H
#define LOCKSCOPE_HOLD_COMMON_BPF_H

#include "common.bpf.h"
#include "stack_budget.bpf.h"

const volatile __u32 hold_sample = 1; /* record 1 in N acquisitions */
/*
 * Acquisitions whose lock call took at least this long, entry to return, are
 * filed in acquire_table: the spin the contention tracepoint may not report
 * (a lone waiter on the qspinlock pending bit, virt_spin_lock). The threshold
 * keeps the uncontended majority (and the probe's own time) out; those
 * acquisitions also get their stack walked whatever the stack budget says.
 */
const volatile __u64 acquire_min_ns = 1000;
/* --holder-stacks: the wait probe reads held and released from other CPUs. */
const volatile bool holder_track = false;
/*
 * A reader that drains (lockscope agent): hold_table and acquire_table have
 * two halves, and holds are filed in half hold_gen & 1. A drain moves
 * hold_gen on, waits until no program that read the old one still runs (an
 * RCU grace period), then reads and clears the half nothing writes any more.
 */
const volatile bool hold_halves = false;
volatile __u32 hold_gen;
/*
 * Set by a drain while it deletes idle stack ids from the hold stack map:
 * the delete takes the map's freelist lock, and a walk from the fexit on
 * that very lock would take it again (a deadlock before rqspinlock).
 */
volatile __u32 hold_walks_paused;

/* Frames of our own above the lock function in a stack walk (see hold_fentry). */
#ifndef LS_HOLD_STACK_SKIP
#define LS_HOLD_STACK_SKIP 0
#endif

struct {
    __uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
    __type(key, __u32);
    __type(value, struct ls_held_stack);
    __uint(max_entries, 1);
} held SEC(".maps");

struct {
    __uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
    __type(key, __u32);
    __type(value, struct ls_hold_slot);
    __uint(max_entries, LS_HOLD_TABLE);
} hold_table SEC(".maps");

struct {
    __uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
    __type(key, __u32);
    __type(value, struct ls_hold_slot);
    __uint(max_entries, LS_ACQUIRE_TABLE);
} acquire_table SEC(".maps");

struct {
    __uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
    __type(key, __u32);
    __type(value, __u64);
    __uint(max_entries, 1);
} sample_tick SEC(".maps");

struct {
    __uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
    __type(key, __u32);
    __type(value, struct ls_released_ring);
    __uint(max_entries, 1);
} released SEC(".maps");

/*
 * When each lock call on this CPU began (fentry on the lock functions), for
 * its fexit to time the acquisition. Calls nest only through irqs, which
 * return before the interrupted call does. An entry whose fexit never ran
 * (skipped as a re-entry: the stack walk's own freelist lock) is dropped
 * when an entry below it is popped; a ring indexed by a free-running depth.
 */
struct ls_entry_stack {
    __u32 depth;
    __u32 pad;
    __u64 lock[LS_HOLD_NEST];
    __u64 ts[LS_HOLD_NEST];
};

struct {
    __uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
    __type(key, __u32);
    __type(value, struct ls_entry_stack);
    __uint(max_entries, 1);
} lock_entries SEC(".maps");

static __always_inline void entry_push(__u64 lock)
{
    __u32 zero = 0, d, i;
    struct ls_entry_stack *s = bpf_map_lookup_elem(&lock_entries, &zero);

    if (!s)
        return;
    d = s->depth;
    i = d & (LS_HOLD_NEST - 1);
    /* Reserve first: an irq that pushes and pops meanwhile stays above us. */
    s->lock[i] = 0;
    s->depth = d + 1;
    s->ts[i] = bpf_ktime_get_ns();
    s->lock[i] = lock;
}

/* When lock's innermost pending call began; 0 when none is pending. */
static __always_inline __u64 entry_pop(__u64 lock)
{
    __u32 zero = 0, d;
    struct ls_entry_stack *s = bpf_map_lookup_elem(&lock_entries, &zero);

    if (!s)
        return 0;
    d = s->depth;
    for (__u32 k = 0; k < LS_HOLD_NEST; k++) {
        __u32 i = (d - 1 - k) & (LS_HOLD_NEST - 1);

        if (k >= d)
            break;
        if (s->lock[i] == lock) {
            __u64 ts = s->ts[i];

            s->lock[i] = 0;
            s->depth = d - 1 - k;
            return ts;
        }
    }
    return 0;
}

/* An acquisition between its push and its publish (see on_acquired). */
struct ls_acquire_at {
    __u64 ts;
    __u32 depth;
    __u32 gen;
};

/*
 * Pushes an entry for an acquisition stamped ts; false when sampling or the
 * filters skip it. The entry's lock is written by acquire_publish, after the
 * stack walk.
 */
static __always_inline bool acquire_push(__u64 lock, __u32 variant, struct ls_acquire_at *at)
{
    __u32 zero = 0, d;
    struct ls_held_stack *s;

    if (hold_sample > 1) {
        __u64 *tick = bpf_map_lookup_elem(&sample_tick, &zero);

        if (!tick || (*tick)++ % hold_sample)
            return false;
    }
    if (!lock_wanted(lock) || !task_wanted())
        return false;
    /* Sampling and filters first: most calls end above, before any clock read. */
    at->ts = bpf_ktime_get_ns();
    s = bpf_map_lookup_elem(&held, &zero);
    if (!s)
        return false;
    d = s->depth;
    if (d >= LS_HOLD_NEST) {
        /*
         * Eight spinlocks held at once on one CPU is all but unheard of: a
         * full stack holds entries whose release this CPU never saw (the
         * unlock program skipped as a re-entry, in an irq that came while it
         * ran). Dropping every new acquisition until those addresses happen
         * to be released again lost most holds on a busy guest; the oldest
         * entry goes instead, once, and counts as lost.
         */
        for (__u32 j = 0; j + 1 < LS_HOLD_NEST; j++)
            s->e[j] = s->e[j + 1];
        d = LS_HOLD_NEST - 1;
        s->depth = d;
        count(LS_C_HOLD_OVERFLOW);
    }
    /* Reserve first: an irq that locks and unlocks meanwhile stays above us. */
    s->e[d].lock = 0;
    s->depth = d + 1;
    s->e[d].ts = at->ts;
    s->e[d].variant = variant;
    at->depth = d;
    at->gen = ++s->gen;
    if (holder_track) {
        /*
         * Publish the lock before the stack walk: the walk is most of this
         * program's time and runs inside the critical section, so a waiter
         * on another CPU would otherwise mostly find a half-written slot.
         * Nothing on this CPU can release this lock meanwhile (an irq cannot
         * unlock what the code it interrupted is taking).
         */
        s->e[d].kstack = LS_STACK_PENDING;
        s->e[d].lock = lock;
    }
    return true;
}

/*
 * One CPU never holds a spinlock twice (it would deadlock), so once lock is
 * taken at d, any other entry for it is stale: an acquisition whose release
 * this CPU never saw (the unlock program skipped as a re-entry). Left there,
 * a later release of lock paired with it and filed a hold of seconds. The
 * entry becomes a tombstone in place, which release_find never matches and
 * release_commit pops once it reaches the top. Moving no entry and no depth,
 * it keeps what an interrupted push or release relies on: their entries stay
 * where they were, and the gen bump of our own push already makes them check.
 * The one entry wrongly hit: an irq takes lock while the code it interrupted
 * is in the unlock program for it, its entry not yet popped; that release is
 * then lost (counted unmatched), never filed against the wrong stamp.
 */
static __always_inline void drop_stale(struct ls_held_stack *s, __u64 lock, __u32 d)
{
    __u32 depth = s->depth;

    for (__u32 i = 0; i < LS_HOLD_NEST; i++) {
        if (i < depth && i != d && s->e[i].lock == lock) {
            s->e[i].lock = LS_HOLD_STALE_LOCK;
            count(LS_C_HOLD_STALE);
        }
    }
}

/*
 * Writes the walked stack and the lock into the entry acquire_push made. An
 * irq during the walk may have moved it (its release of a lock below ours
 * closes the gap; its push onto a full stack evicts the bottom): the entry
 * is then found again by its stamp, the only one not yet published (or, with
 * holder tracking, published with this lock). Writing at the old depth
 * instead left the lock above the stack (its release went unmatched) or on
 * an entry the irq had pushed since, with that entry's stamp.
 */
static __always_inline void acquire_publish(__u64 lock, const struct ls_acquire_at *at, __s32 kstack)
{
    __u32 zero = 0, d = at->depth;
    struct ls_held_stack *s = bpf_map_lookup_elem(&held, &zero);

    if (!s)
        return;
    if (s->gen != at->gen) {
        __u32 depth = s->depth;

        d = LS_HOLD_NEST;
        for (__u32 i = 0; i < LS_HOLD_NEST; i++) {
            if (i < depth && s->e[i].ts == at->ts && (s->e[i].lock == 0 || s->e[i].lock == lock))
                d = i;
        }
        /* Counted only where writing at the old slot would have been wrong. */
        if (d != at->depth)
            count(LS_C_HOLD_RACED);
        if (d >= LS_HOLD_NEST)
            return; /* evicted meanwhile: lost, as an overflow */
    }
    d &= LS_HOLD_NEST - 1; /* for the verifier: at came through memory */
    s->e[d].kstack = kstack;
    s->e[d].lock = lock;
    drop_stale(s, lock, d);
}

static __always_inline void slot_add(void *table, __u32 table_size, __u64 lock, __s32 kstack, __u32 variant,
                                     __u64 delta);

/*
 * entry_ts: when the lock call began (0: unknown, or a trylock, which does
 * not spin). The acquisition's wait is the time from there to acquire_push's
 * stamp.
 */
static __always_inline void on_acquired(void *ctx, __u64 lock, __u32 variant, __u64 entry_ts)
{
    struct ls_acquire_at at;
    __s32 kstack;
    bool slow;

    if (!acquire_push(lock, variant, &at))
        return;
    slow = entry_ts && at.ts > entry_ts && at.ts - entry_ts >= acquire_min_ns;
    /* The walk runs inside the critical section just entered: the budget
     * bounds what every acquisition pays. A holder found by the wait probe
     * must name a stack, so holder tracking walks them all. Slow
     * acquisitions keep to the budget too: under emulation nearly every one
     * is slow, and walking them all lengthened every hold (the seed-02 hold
     * p90 of the baseline went from ~1 to 30 us); their histogram is exact
     * all the same, only their paths are sampled. */
    if (!hold_walks_paused && (!stacks_on || holder_track || walk_this_stack(at.ts, lock))) {
        kstack = stack_id(ctx, LS_HOLD_STACK_SKIP & BPF_F_SKIP_FIELD_MASK);
    } else {
        kstack = LS_STACK_UNSAMPLED;
        count(LS_C_STACK_UNSAMPLED);
    }
    acquire_publish(lock, &at, kstack);
    if (slow)
        slot_add(&acquire_table, LS_ACQUIRE_TABLE, lock, kstack, variant, at.ts - entry_ts);
}

/* Remembers who released lock, for a waiter that found the holder mid-walk. */
static __always_inline void note_release(__u64 lock, __s32 kstack)
{
    __u32 zero = 0, i;
    struct ls_released_ring *r = bpf_map_lookup_elem(&released, &zero);

    if (!r)
        return;
    i = r->next++ & (LS_RELEASED - 1);
    r->e[i].lock = 0;
    r->e[i].kstack = kstack;
    r->e[i].lock = lock;
}

/* A stack id as the slot tables' keys keep it (LS_HOLD_SID_SPILL). */
static __always_inline __u16 hold_sid(__s32 kstack)
{
    /* Still LS_STACK_PENDING at release (holder tracking): the acquire's
     * walk found no entry to write its result to (acquire_publish); the hold
     * is filed as not walked rather than under a bogus stack id. */
    if (kstack == LS_STACK_UNSAMPLED || kstack == LS_STACK_PENDING)
        return LS_HOLD_SID_UNSAMPLED;
    if (kstack >= 0 && ((__u32)kstack >> LS_STACK_TAG_SHIFT) == LS_STACKS_SPILL)
        return (__u16)(LS_HOLD_SID_SPILL + ((__u32)kstack & LS_STACK_ID_MASK));
    return (__u16)(kstack + 1);
}

/* Files delta under (lock, stack, variant, cgroup) in a per-CPU slot table. */
static __always_inline void slot_add(void *table, __u32 table_size, __u64 lock, __s32 kstack, __u32 variant,
                                     __u64 delta)
{
    __u16 sid = hold_sid(kstack);
    __u64 key = (lock & 0xffffffffffffULL) | ((__u64)sid << 48);
    /* --per-cgroup: the releasing task's group, the one that took the lock
     * except where a lock is handed over across a context switch. */
    __u64 cg = per_cgroup ? bpf_get_current_cgroup_id() : 0;
    __u64 h = (key ^ cg) * 0x9e3779b97f4a7c15ULL;
    __u32 idx = (__u32)(h >> 52);
    __u32 half = hold_halves ? (hold_gen & 1) * table_size : 0;

    for (int i = 0; i < LS_HOLD_PROBE; i++) {
        __u32 slot_idx = ((idx + i) & (table_size - 1)) + half;
        struct ls_hold_slot *slot = bpf_map_lookup_elem(table, &slot_idx);

        if (!slot)
            return;
        if (slot->key != key) {
            if (slot->key != 0 || __sync_val_compare_and_swap(&slot->key, 0, key) != 0) {
                if (slot->key != key)
                    continue;
            } else {
                slot->cgroup = cg;
                slot->variant = variant;
                slot->hist.min = ~0ULL;
            }
        }
        /* A slot is claimed before its cgroup is written: an irq that finds
         * it half-claimed moves on (per_cgroup ids are never 0). */
        if (slot->cgroup != cg)
            continue;
        hist_add(&slot->hist, delta);
        count(LS_C_HOLD_EVENTS);
        return;
    }
    count(LS_C_MAP_FULL);
}

static __always_inline void hold_add(__u64 lock, __s32 kstack, __u32 variant, __u64 delta)
{
    slot_add(&hold_table, LS_HOLD_TABLE, lock, kstack, variant, delta);
}

/*
 * Files the hold in e, ended at now, unless it ended before it began: an
 * unlock paired with a later acquisition makes the u64 difference wrap to
 * ~1.8e19 ns, which then owns the lock's mean and max. release_commit keeps
 * irqs from causing that; what remains (a struct copy torn by an irq) is
 * dropped and counted (stats.impossible_holds).
 */
static __always_inline void hold_close(__u64 lock, const struct ls_held *e, __u64 now)
{
    if (now < e->ts) {
        count(LS_C_HOLD_IMPOSSIBLE);
        return;
    }
    hold_add(lock, e->kstack, e->variant, now - e->ts);
}

/* A release between finding its entry and filing it (see on_release). */
struct ls_release_at {
    __u64 now;
    __u32 depth;
    __u32 gen;
    __s32 found;
    __u32 pad;
};

/* Finds lock's innermost entry; false when this CPU holds no entry for it. */
static __always_inline bool release_find(__u64 lock, struct ls_release_at *at)
{
    __u32 zero = 0, d;
    struct ls_held_stack *s = bpf_map_lookup_elem(&held, &zero);

    at->found = -1;
    if (!s)
        return false;
    at->gen = s->gen;
    d = s->depth;
    if (d > LS_HOLD_NEST)
        d = LS_HOLD_NEST;
    at->depth = d;
    for (int i = LS_HOLD_NEST - 1; i >= 0; i--) {
        if ((__u32)i < d && s->e[i].lock == lock) {
            at->found = i;
            break;
        }
    }
    return at->found >= 0;
}

/*
 * Pops the entry release_find found and files its hold, unless an irq
 * changed the stack in between (false: find again). Without this check the
 * copy could be another entry moved into the found slot: an irq's release of
 * a lock below closes the gap, shifting down whatever lay above, including
 * the leftovers of the irq's own pushes and pops; an irq's push onto a full
 * stack shifts everything down. Paired with such an entry, stamped by the
 * irq after this release began, the hold "ended before it began" (max_ns
 * 18446744073680822936 on a 6.1 guest); paired with an older one, it was
 * filed too long, and this lock's own entry was left behind.
 */
static __always_inline bool release_commit(__u64 lock, const struct ls_release_at *at)
{
    __u32 zero = 0, d = at->depth, found = (__u32)at->found & (LS_HOLD_NEST - 1);
    struct ls_held_stack *s = bpf_map_lookup_elem(&held, &zero);
    struct ls_held e;

    if (!s)
        return true;
    e = s->e[found];
    if (s->gen != at->gen || e.lock != lock) {
        /* Counted only where the old unchecked pop went wrong: another
         * lock's entry copied, or the depth restored from a stale value. */
        if (e.lock != lock || s->depth != d)
            count(LS_C_HOLD_RACED);
        return false;
    }
    s->gen++;
    if (holder_track) {
        /*
         * The lock stays held while this program runs: keep its entry
         * visible to waiters scanning from other CPUs until the end (an irq
         * here pushes and pops above d, leaving d as it was).
         */
        note_release(lock, e.kstack);
        hold_close(lock, &e, at->now);
    }
    /* Out-of-order release (lock A, lock B, unlock A): close the gap. */
    for (int j = 0; j < LS_HOLD_NEST - 1; j++) {
        if ((__u32)j >= found && (__u32)j + 1 < d)
            s->e[j] = s->e[j + 1];
    }
    /* Tombstones drop_stale left that are now on top go too. */
    d--;
    for (int j = LS_HOLD_NEST - 1; j >= 0; j--) {
        if ((__u32)j + 1 == d && s->e[j].lock == LS_HOLD_STALE_LOCK)
            d = j;
    }
    s->depth = d;
    if (!holder_track)
        hold_close(lock, &e, at->now);
    return true;
}

/* Tries this many times to pop an entry irqs keep moving, then drops the hold. */
#define LS_RELEASE_TRIES 3

/* The release stamped at->now; found: release_find already ran into at. */
static __always_inline void release_from(__u64 lock, struct ls_release_at *at, bool found)
{
    for (int i = 0; i < LS_RELEASE_TRIES; i++) {
        if (!found && !release_find(lock, at)) {
            /* With sampling, unseen acquisitions are expected, not errors. */
            if (hold_sample <= 1 && lock_wanted(lock) && task_wanted())
                count(LS_C_HOLD_UNMATCHED);
            return;
        }
        if (release_commit(lock, at))
            return;
        found = false;
    }
}

static __always_inline void on_release(__u64 lock)
{
    struct ls_release_at at;

    at.now = bpf_ktime_get_ns();
    release_from(lock, &at, false);
}

#endif /* LOCKSCOPE_HOLD_COMMON_BPF_H */
