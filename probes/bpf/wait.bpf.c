// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Lock wait time from lock:contention_begin/end. The same logic is attached
 * through one of three hooks (tp_btf, raw_tp, tracepoint); userspace enables
 * exactly one pair with bpf_program__set_autoload.
 *
 * Pairing: a spinning wait cannot migrate or sleep, so it is kept on a per-CPU
 * stack; a sleeping wait (mutex, rwsem, rtmutex, ...) is kept per task. Both
 * are small stacks because waits nest: an irq can contend a spinlock while the
 * interrupted code is itself spinning, and a mutex waiter spins on the
 * mutex's wait_lock. An end pops the newest pending wait on the same lock;
 * pending entries above it never got their end (missed event) and are dropped
 * and counted as stale.
 */
#include "common.bpf.h"
#include "stack_budget.bpf.h"
#include "time_budget.bpf.h"
#include "lock_owner.bpf.h"
#include "lock_name.bpf.h"

char LICENSE[] SEC("license") = "Dual BSD/GPL";

struct {
    __uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
    __type(key, __u32);
    __type(value, struct ls_wait_stack);
    __uint(max_entries, 1);
} cpu_pending SEC(".maps");

/*
 * Task-local: a sleeping wait's end runs with its lock just taken, and a hash
 * keyed by tid cost it a lookup there and, once the task's last wait ended,
 * a delete under the map's bucket lock. The slot lives as long as the task.
 */
struct {
    __uint(type, BPF_MAP_TYPE_TASK_STORAGE);
    __uint(map_flags, BPF_F_NO_PREALLOC);
    __type(key, int);
    __type(value, struct ls_wait_stack);
} task_pending SEC(".maps");

/*
 * Per CPU: every CPU ends waits on a hot lock under the same key, and one
 * shared histogram moved its cache lines between the CPUs on every end, on
 * top of the lock's own line the workload is fighting over. Not
 * preallocated: a key costs a histogram per possible CPU, paid only for the
 * keys that occur.
 */
struct {
    __uint(type, BPF_MAP_TYPE_PERCPU_HASH);
    __uint(map_flags, BPF_F_NO_PREALLOC);
    __type(key, struct ls_wait_key);
    __type(value, struct ls_hist);
    __uint(max_entries, 16384);
} waits SEC(".maps");

/*
 * The generation waits are filed in (LS_WAIT_F_GEN). A drain (lockscope
 * agent, wait_hist.cpp drainWaits) moves it on, waits until no program that
 * read the old one still runs, takes the old generation's entries and empties
 * them in place. The entries stay, so the next window's first waits on a
 * busy lock find theirs: deleted, they were created again in a burst that the
 * map's per-CPU element cache refused (-ENOMEM, lost waits). Never moves in a
 * recording that is not drained.
 */
volatile __u32 wait_gen;

/*
 * Every contention_begin the programs run for, filtered out or not: what
 * they cost the machine, the rate Options::wait_rate_cap is compared with
 * (wait_duty.cpp). Counted only where the programs may be sampled.
 */
const volatile bool count_begins = false;

/* gen: the low bit of wait_gen, read once by a caller that files more than
 * the histogram (record_wait: a wait and its holder go to one window). */
static __always_inline struct ls_hist *wait_hist_in(const struct ls_wait_key *key, __u64 n, __u32 gen)
{
    struct ls_wait_key k;

    if (!gen)
        return hist_of_n(&waits, key, n);
    k = *key;
    k.flags |= LS_WAIT_F_GEN;
    return hist_of_n(&waits, &k, n);
}

static __always_inline struct ls_hist *wait_hist_of(const struct ls_wait_key *key, __u64 n)
{
    return wait_hist_in(key, n, wait_gen & 1);
}

/*
 * Holder stacks. held is the hold probe's per-CPU stack of spinlocks held
 * (hold_common.bpf.h); userspace creates it once and hands it to both objects
 * (SharedMaps), so this declaration only fixes the type. holder_scan prunes
 * the whole scan unless --holder-stacks asked for it; the runtime switch
 * LS_RT_HOLDER_SCAN turns it on only once the hold probe is attached (it is
 * opened after this object), so an empty held map never counts as "missing".
 */
const volatile bool holder_scan = false;

/* The budgets' windows are real time; the pairing tests set test_clock and
 * step test_now_ns to open and close them where they choose. In a recording
 * the verifier prunes the test branch (test_clock is read-only false). */
const volatile bool test_clock = false;
__u64 test_now_ns;

static __always_inline __u64 now_ns(void)
{
    return test_clock ? test_now_ns : bpf_ktime_get_ns();
}

/*
 * Waits a tick went by in are timed whatever the budget (tick_went_by). An
 * untimed wait reads the clock at its begin, where its lock is held by
 * another task anyway, and the tick count (jiffies); its end, with the lock
 * just taken, reads only the tick count (a load, no clock source read;
 * bpf_ktime_get_coarse_ns is not allowed in tracing programs) and reads the
 * clock, and is filed timed, only when a tick has gone by since the begin.
 * No wait of a tick and the tick's own lateness escapes that, so userspace
 * makes this a power of two of at least 1.5 ticks (probes::exactWaitNs):
 * every wait that long is timed and lands in its own bucket, and the buckets
 * from there up are exact. 0: no budget, nothing to do.
 */
const volatile __u64 exact_wait_ns = 0;

/* On the test clock a tick is 1 ms. */
static __always_inline __u64 ticks(void)
{
    return test_clock ? test_now_ns / 1000000 : bpf_jiffies64();
}

const volatile __u32 holder_nr_cpus = 0; /* possible CPUs, at most LS_HOLDER_MAX_CPUS */

struct {
    __uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
    __type(key, __u32);
    __type(value, struct ls_held_stack);
    __uint(max_entries, 1);
} held SEC(".maps");

/* The hold probe's per-CPU rings of recent releases, shared like held. */
struct {
    __uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
    __type(key, __u32);
    __type(value, struct ls_released_ring);
    __uint(max_entries, 1);
} released SEC(".maps");

struct {
    __uint(type, BPF_MAP_TYPE_HASH);
    __type(key, struct ls_holder_key);
    __type(value, struct ls_holder_val);
    __uint(max_entries, 16384);
} holders SEC(".maps");

/*
 * Moved on by userspace before each attachment when the programs are
 * attached only part of the time (Options::wait_rate_cap, wait_duty.cpp). A
 * wait stack pushed in an earlier attachment holds begins whose ends came
 * while the programs were detached: an end now must not pair with them
 * (its own begin was missed, and the old one's time spans the detached
 * stretch). They are dropped uncounted: missing those waits is the sampling's
 * design, which the drain scales for, not a loss.
 */
volatile __u32 attach_epoch;

static __always_inline void settle_epoch(struct ls_wait_stack *s)
{
    __u32 e = attach_epoch;

    if (s && s->epoch != e) {
        s->depth = 0;
        s->epoch = e;
    }
}

/* Mutexes report LCB_F_SPIN while optimistically spinning, then may sleep
 * under the same lock: only pure spinning locks belong to the CPU. */
static __always_inline bool per_cpu_wait(__u32 flags)
{
    return (flags & LS_LCB_F_SPIN) && !(flags & LS_LCB_F_MUTEX);
}

/* The hold probe covers raw spinlocks only: rwlocks, mutexes, rwsems and
 * rtmutexes have no held entries to find. */
static __always_inline bool plain_spinlock(__u32 flags)
{
    return flags == LS_LCB_F_SPIN;
}

struct holder_scan_ctx {
    __u64 lock;
    __u32 self;
    __s32 holder;
    __u32 state; /* enum ls_holder_state */
};

/*
 * Looks for lock in every other CPU's held stack. This reads another CPU's
 * per-CPU slots while that CPU keeps running, without any synchronisation:
 * the answer is approximate by nature. The holder may release the lock (and
 * even take another one into the same slot) between our read of the depth
 * and of the entry, so a wait can be attributed to a holder that let go a
 * moment before, or find no holder at all; a slot being written is never
 * mistaken for another lock: on_acquired writes the lock word after the
 * rest, except the stack id, which is LS_STACK_PENDING until the holder's
 * stack walk ends; such a wait looks for the stack in the holder's releases
 * when it ends (resolve_pending_holder). The current CPU is skipped: it
 * cannot hold the spinlock it is waiting for.
 */
static __always_inline void find_holder(struct holder_scan_ctx *c)
{
    __u32 zero = 0;

    for (__u32 cpu = 0; cpu < LS_HOLDER_MAX_CPUS; cpu++) {
        struct ls_held_stack *s;
        __u32 d;

        if (cpu >= holder_nr_cpus)
            break;
        if (cpu == c->self)
            continue;
        s = bpf_map_lookup_percpu_elem(&held, &zero, cpu);
        if (!s)
            continue;
        d = s->depth;
        for (__u32 i = 0; i < LS_HOLD_NEST; i++) {
            if (i >= d)
                break;
            if (s->e[i].lock == c->lock) {
                __s32 k = s->e[i].kstack;

                c->state = k == LS_STACK_PENDING ? LS_HOLDER_PENDING : LS_HOLDER_FOUND;
                c->holder = k == LS_STACK_PENDING ? (__s32)cpu : k;
                return;
            }
        }
    }
}

static __always_inline struct ls_wait_stack *task_stack(bool create)
{
    struct ls_wait_stack *s = bpf_task_storage_get(&task_pending, bpf_get_current_task_btf(), 0,
                                                   create ? BPF_LOCAL_STORAGE_GET_F_CREATE : 0);

    if (!s && create)
        count(LS_C_MAP_FULL);
    return s;
}

/* The task's wait stack, or NULL when the filters leave the task out (or
 * the storage is full: *full). A hot mutex's waiter passes the tgid filter's
 * hash lookup once, not at every wait. */
static __always_inline struct ls_wait_stack *wanted_task_stack(bool *full)
{
    struct ls_wait_stack *s = task_stack(false);

    *full = false;
    if (!task_wanted_as(s && s->tgid_wanted))
        return NULL;
    if (!s) {
        s = task_stack(true);
        *full = !s;
    }
    if (s && tgid_filter_on())
        s->tgid_wanted = 1;
    return s;
}

/* Wait programs may update hash maps (a bucket spinlock): unlike the hold
 * programs, they do not run inside _raw_spin_lock* probes of their own. */
static __always_inline void holder_add(const struct ls_wait_done *w, __u32 gen)
{
    struct ls_holder_key key = {
        .lock = w->lock,
        .wait_kstack = w->kstack,
        .holder_kstack = w->holder,
        .tgid = w->tgid,
        .gen = gen,
        .cgroup = w->cgroup,
    };

    charge_holder(&holders, &key, w->delta);
}

/*
 * Ended waits not yet in their histograms. contention_end runs with the lock
 * just taken: a hash lookup and histogram update there lengthen every
 * contended critical section, and the waiters queued behind it pay for that
 * again (measured in bench/record/README.md, "Contention capture, toggled
 * under one run"). So an end only fills a slot here, and the next contention_begin on the CPU,
 * which runs while its lock is held by someone else anyway, does the update.
 * A full ring (ends of sleeping waits on a CPU that begins none) falls back
 * to updating at the end. Only this CPU's programs touch its ring: an end
 * reserves its slot before filling it and marks it ready last, so an irq's
 * end takes the next slot and an irq's drain stops at the unfilled one; an
 * end nested in a begin's drain appends past the head the drain read.
 */
struct {
    __uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
    __type(key, __u32);
    __type(value, struct ls_wait_done_ring);
    __uint(max_entries, 1);
} done SEC(".maps");

/*
 * The budget's period follows the contention rate, so a quiet stretch (a
 * long hold: few waits, longer ones) has more of its waits timed than a busy
 * one, and its untimed waits given the timed ones' plain distribution come
 * out too long (probes/README.md, "Timing budget"). So an unwalked timed
 * spin also goes, weighted by the untimed waits of its lock it stands for
 * (weigh_begin), into a histogram under the key its untimed waits are
 * counted under (count_untimed), flagged LS_WAIT_F_WEIGHTED; userspace gives
 * the untimed waits that distribution (wait_hist.cpp). Waits a tick went by in are left out, as from the
 * untimed ones (tick_went_by).
 */
static __always_inline void weigh_timed(const struct ls_wait_done *w)
{
    struct ls_wait_key key = {
        .lock = w->lock,
        .kstack = stacks_on ? LS_STACK_UNSAMPLED : -1,
        .flags = w->flags | LS_WAIT_F_WEIGHTED,
        .tgid = per_tgid ? w->tgid : 0,
        .ustack = -1,
        .cgroup = w->cgroup,
    };
    /* Not an event: a miss only leaves the estimate fewer samples. */
    struct ls_hist *h = wait_hist_of(&key, 0);

    if (h)
        weighted_add(h, w->delta, w->weight);
}

static __always_inline void record_wait(const struct ls_wait_done *w)
{
    struct ls_wait_key key = {
        .lock = w->lock,
        .kstack = w->kstack,
        .flags = w->flags,
        .tgid = w->tgid,
        .ustack = w->ustack,
        .cgroup = w->cgroup,
    };
    const __u32 gen = wait_gen & 1;
    struct ls_hist *h = wait_hist_in(&key, 1, gen);

    if (!h)
        return;
    if (w->counted) {
        hist_add_time_cpu(h, w->delta);
        return;
    }
    hist_add_cpu(h, w->delta);
    count(LS_C_WAIT_EVENTS);
    if (w->weight && !(w->flags & LS_WAIT_F_TICKED))
        weigh_timed(w);
    if (holder_scan && w->holder_state == LS_HOLDER_FOUND)
        holder_add(w, gen);
    if (owner_scan && w->owner_tid)
        owner_add(w);
}

static __always_inline void drain_done(void)
{
    __u32 zero = 0, head;
    struct ls_wait_done_ring *r = bpf_map_lookup_elem(&done, &zero);

    if (!r || r->head == r->tail)
        return;
    head = r->head;
    for (__u32 i = 0; i < LS_WAIT_DONE; i++) {
        __u32 t = r->tail;
        struct ls_wait_done *slot = &r->e[t & (LS_WAIT_DONE - 1)], w;

        /* Not ready: the end that reserved it is still filling it (we run
         * in an irq that interrupted it); the next drain takes it. */
        if (t == head || !slot->ready)
            break;
        w = *slot;
        slot->ready = 0;
        r->tail = t + 1;
        record_wait(&w);
    }
}

/*
 * Timing budget (time_budget.bpf.h). Under heavy contention the cost that
 * matters is not CPU time but what the programs do to the lock:
 * contention_end runs with the lock just taken, and every clock read there
 * lengthens the critical section the other waiters queue behind, which makes
 * the next acquisition contend too (bench/record/README.md, "Timing
 * budget", has the cost of timing every wait). An untimed wait reads no clock at
 * its end unless a tick went by (exact_wait_ns), is never walked, and is
 * counted without a ring slot (begin_counted). Userspace spreads its count
 * like the unwalked timed waits of its key weighted by the untimed ones each
 * stands for (weigh_timed), else like other timed waits of its lock
 * (wait_hist.cpp). A mutex's optimistic spin takes the budget
 * too, but every sleep is timed: a wait that begins asleep, and an untimed
 * mutex wait from the moment it stops spinning to sleep (time_from_sleep).
 */
static __always_inline __u32 time_slot(__u64 lock)
{
    return (__u32)((lock >> 4) * 0x9E3779B97F4A7C15ULL >> 60) & (LS_TIME_SLOTS - 1);
}

/*
 * Untimed waits (ls_wait_counts). A spinning one needs nothing from its end:
 * no clock, no stack, and a spinning wait is never aborted. So its begin
 * counts it here, by its histogram key, and pushes a bare "counted" entry
 * that its end only pops: no ring slot, no histogram lookup per wait. An
 * untimed mutex spin is counted by its end, since it may still turn into a
 * sleep (then it is timed from there: time_from_sleep) or be aborted.
 * Begins write cache 0 and ends cache 1, and a program
 * never nests in itself on a CPU (the kernel skips it as a recursion miss),
 * so no update here is torn.
 */
#define LS_COUNTS_BY_BEGIN 0
#define LS_COUNTS_BY_END 1

struct {
    __uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
    __type(key, __u32);
    __type(value, struct ls_wait_counts);
    __uint(max_entries, LS_WAIT_COUNT_CACHES);
} wait_counts SEC(".maps");

/* Bounds what a live read (the status line's event count) misses of a hot
 * lock that is never evicted. */
#define LS_WAIT_COUNT_FLUSH 1024

static __always_inline void flush_count(struct ls_wait_count *e)
{
    __u64 n = e->count;
    struct ls_hist *h;

    if (!n)
        return;
    e->count = 0;
    h = wait_hist_of(&e->key, n);
    if (!h)
        return;
    h->count += n;
    count_n(LS_C_WAIT_EVENTS, n);
    if (e->key.kstack == LS_STACK_UNSAMPLED)
        count_n(LS_C_STACK_UNSAMPLED, n);
}

/* The key record_wait would file an untimed wait of the current task under;
 * cache: LS_COUNTS_BY_BEGIN or LS_COUNTS_BY_END, the program counting it. */
static __always_inline void count_untimed(__u64 lock, __u32 flags, __u32 slot, __u64 id, __u32 cache)
{
    __u32 tgid = per_tgid ? (__u32)(id >> 32) : 0;
    __u64 cgroup = per_cgroup ? bpf_get_current_cgroup_id() : 0;
    struct ls_wait_counts *c = bpf_map_lookup_elem(&wait_counts, &cache);
    struct ls_wait_count *e;

    if (!c)
        return;
    e = &c->e[slot & (LS_WAIT_COUNTS - 1)];
    if (e->key.lock != lock || e->key.flags != flags || e->key.tgid != tgid || e->key.cgroup != cgroup) {
        flush_count(e);
        e->key.lock = lock;
        e->key.kstack = stacks_on ? LS_STACK_UNSAMPLED : -1;
        e->key.flags = flags;
        e->key.tgid = tgid;
        e->key.ustack = -1;
        e->key.cgroup = cgroup;
    }
    if (++e->count >= LS_WAIT_COUNT_FLUSH)
        flush_count(e);
}

/* An untimed wait: a bare entry for its end, and a spinning wait counted now. */
static __always_inline int begin_counted(struct ls_wait_stack *s, __u64 lock, __u32 flags, __u32 slot)
{
    __u64 id = bpf_get_current_pid_tgid();
    __u32 d;

    if (!s)
        return 0;
    d = s->depth;
    if (d >= LS_NEST) {
        count(LS_C_NEST_OVERFLOW);
        return 0;
    }
    if (per_cpu_wait(flags))
        count_untimed(lock, flags, slot, id, LS_COUNTS_BY_BEGIN);
    s->e[d].lock = 0;
    s->depth = d + 1;
    s->e[d].counted = 1;
    s->e[d].weight = 0;
    if (exact_wait_ns) {
        s->e[d].ts = now_ns();
        s->e[d].begin_tick = (__u32)ticks();
    }
    s->e[d].flags = flags;
    s->e[d].tid = (__u32)id;
    s->e[d].lock = lock;
    return 0;
}

/* The wait's stacks, within the stack budget, unless may_walk is false;
 * true when they were walked. */
static __always_inline bool take_stacks(void *ctx, struct ls_pending *e, __u64 now, __u64 lock, __u64 skip,
                                        bool may_walk)
{
    /* Without stacks (--stack-depth 0) every wait is "no stack" (-1): none
     * is left unwalked, so no budget and no [stack not sampled] site. */
    if (!stacks_on) {
        e->kstack = -1;
        e->ustack = -1;
        return false;
    }
    if (may_walk && walk_this_stack(now, lock)) {
        e->kstack = stack_id(ctx, skip & BPF_F_SKIP_FIELD_MASK);
        e->ustack = user_stack_id(ctx);
        return true;
    }
    e->kstack = LS_STACK_UNSAMPLED;
    e->ustack = -1;
    count(LS_C_STACK_UNSAMPLED);
    return false;
}

/*
 * The untimed waits are given the times of the timed ones that were not
 * walked (weigh_timed): a walk at the begin is inside the wait's time (1-2
 * us, as long as a hot mutex's waits), and a walked wait never reads
 * shorter than its walk. Under a binding budget the walks would take every
 * timed wait of a busy window (2 timed, 10 walks a window at
 * --timing-budget 200), so there a timed wait is walked only on a coin
 * toss: random, so the walked ones stay a fair sample of call paths and the
 * unwalked ones of times. A lock's first timed wait in its countdown slot is
 * walked whatever the coin: a rare lock next to a hot one still gets its
 * call path.
 */
static __always_inline bool walk_coin(const struct ls_time_tick *t, __u64 lock, __u32 slot)
{
    if (!t || t->period <= 1 || t->key[slot & (LS_TIME_SLOTS - 1)] != lock)
        return true;
    return bpf_get_prandom_u32() & 1;
}

/*
 * A timed wait's weight: the untimed waits of its lock its countdown lets
 * pass next; 0 when it was walked. The walked ones' untimed waits are left
 * to the others' times rather than carried to the next unwalked wait: that
 * may come in another stretch (after a quiet window every wait is timed and
 * walked while the stack budget lasts), and a busy stretch's weight put on a
 * quiet stretch's long waits pushed the estimated tail buckets too long.
 */
static __always_inline __u32 weigh_begin(const struct ls_time_tick *t, __u32 slot, bool walked)
{
    if (!t || walked)
        return 0;
    return t->skip[slot & (LS_TIME_SLOTS - 1)];
}

/* An untimed mutex wait that stops spinning to sleep is timed: sleeps are a
 * mutex's long, rare waits, which a 1-in-N sample would often miss, and they
 * weigh most in its total. Timed from its begin when that read the clock
 * (exact_wait_ns), as perf does; else from now, its spin left out. */
static __always_inline void time_from_sleep(void *ctx, struct ls_pending *e, __u64 lock, __u64 skip)
{
    __u64 now = now_ns();

    if (!exact_wait_ns)
        e->ts = now;
    take_stacks(ctx, e, now, lock, skip, true);
    e->holder = -1;
    e->holder_state = LS_HOLDER_NONE;
    e->owner_tid = 0;
    e->owner_stack = 0;
    e->counted = 0;
    e->weight = 0;
}

/* skip: frames of the BPF machinery above the lock code (the program and
 * bpf_trace_run2 for tp_btf/raw_tp; none for perf tracepoints), so stacks
 * start at the lock slow path whatever the hook. task_stacks: the hook may
 * walk another task's stack (lock owners; tp_btf only). */
static __always_inline int on_begin(void *ctx, __u64 lock, __u32 flags, __u64 skip, bool task_stacks)
{
    struct ls_time_tick *tick = NULL;
    struct ls_wait_stack *s;
    __u32 zero = 0, d, slot = 0;
    __u64 ts;
    bool walk;

    if (count_begins)
        count(LS_C_WAIT_BEGINS);
    drain_done();
    if (filter_flags_mask && !(flags & filter_flags_mask))
        return 0;
    if (!lock_wanted(lock))
        return 0;

    if (per_cpu_wait(flags)) {
        if (!task_wanted())
            return 0;
        s = bpf_map_lookup_elem(&cpu_pending, &zero);
        settle_epoch(s);
        tick = time_tick_here();
        slot = time_slot(lock);
        if (tick && untimed_event(tick, lock, slot))
            return begin_counted(s, lock, flags, slot);
    } else {
        bool full;

        s = wanted_task_stack(&full);
        if (!s && !full)
            return 0;
        settle_epoch(s);
        /* A mutex first spins, then sleeps: one wait, timed from the first
         * begin. Once it sleeps it is a "mutex" wait, no longer "mutex:spin",
         * and its owner (now maybe asleep too) is read again, with its stack. */
        if (s) {
            d = s->depth;
            if (d > 0 && d <= LS_NEST) {
                struct ls_pending *top = &s->e[(d - 1) & (LS_NEST - 1)];

                if (top->lock == lock) {
                    if ((top->flags & LS_LCB_F_SPIN) && !(flags & LS_LCB_F_SPIN)) {
                        top->flags = flags;
                        top->weight = 0; /* a sleep now: its lock's untimed waits are spins */
                        if (top->counted)
                            time_from_sleep(ctx, top, lock, skip);
                        if (owner_scan)
                            read_owner(top, lock, flags, task_stacks);
                    }
                    return 0;
                }
            }
        }
        /* A hot mutex (f_pos_lock under threads reading one file) is
         * contended 10^5 times a second, mostly spinning: its spins take the
         * budget too. A wait that begins asleep is always timed. */
        if (flags & LS_LCB_F_SPIN) {
            tick = time_tick_here();
            slot = time_slot(lock);
            if (tick && untimed_event(tick, lock, slot))
                return begin_counted(s, lock, flags, slot);
        }
    }
    /* Only timed waits: a lock's first wait on a CPU is always timed (the
     * budget times a key before it skips any), so every contended lock is
     * named, and a hot one is not looked up again at every wait. */
    if (lock_names)
        name_lock(lock, flags, task_stacks);
    if (!s)
        return 0;

    d = s->depth;
    if (d >= LS_NEST) {
        count(LS_C_NEST_OVERFLOW);
        return 0;
    }
    /* Reserve the slot before filling it: an irq arriving in between pushes
     * above us instead of over us. lock is written last so a half-written
     * slot never matches. */
    s->e[d].lock = 0;
    s->depth = d + 1;
    ts = now_ns();
    walk = walk_coin(tick, lock, slot); /* before timed_event takes the slot */
    if (tick)
        timed_event(tick, lock, slot, ts, false);
    s->e[d].counted = 0;
    s->e[d].ts = ts;
    s->e[d].begin_tick = exact_wait_ns ? (__u32)ticks() : 0;
    s->e[d].flags = flags;
    s->e[d].tid = (__u32)bpf_get_current_pid_tgid();
    s->e[d].weight = weigh_begin(tick, slot, take_stacks(ctx, &s->e[d], ts, lock, skip, walk));
    s->e[d].holder = -1;
    s->e[d].holder_state = LS_HOLDER_NONE;
    if (holder_scan && plain_spinlock(flags) && runtime_on(LS_RT_HOLDER_SCAN)) {
        struct holder_scan_ctx c = { .lock = lock, .self = bpf_get_smp_processor_id(), .holder = -1 };

        find_holder(&c);
        s->e[d].holder = c.holder;
        s->e[d].holder_state = c.state;
        if (c.state == LS_HOLDER_NONE)
            count(LS_C_HOLDER_MISSING);
    }
    s->e[d].owner_tid = 0;
    s->e[d].owner_stack = 0;
    if (owner_scan && !per_cpu_wait(flags))
        read_owner(&s->e[d], lock, flags, task_stacks);
    s->e[d].lock = lock;
    return 0;
}

/*
 * The holder was still walking its stack at contention_begin; by now (this
 * wait has got the lock) it has released it, so its stack is in its ring of
 * releases, unless it released LS_RELEASED more locks since (then: not found).
 */
static __always_inline void resolve_pending_holder(struct ls_pending *p)
{
    __u32 zero = 0;
    struct ls_released_ring *r = bpf_map_lookup_percpu_elem(&released, &zero, (__u32)p->holder);

    if (r) {
        __u32 next = r->next;

        for (__u32 k = 1; k <= LS_RELEASED; k++) {
            __u32 i = (next - k) & (LS_RELEASED - 1);

            if (r->e[i].lock == p->lock) {
                p->holder = r->e[i].kstack;
                p->holder_state = LS_HOLDER_FOUND;
                return;
            }
        }
    }
    p->holder_state = LS_HOLDER_NONE;
    count(LS_C_HOLDER_MISSING);
}

/* A tick went by in the wait (exact_wait_ns): such a wait is timed whatever
 * the budget (LS_WAIT_F_TICKED), every one, so the untimed waits and the sample
 * they are given the times of both saw no tick. An untimed one reads the
 * clock only then; at most a wait per CPU per tick. */
static __always_inline bool tick_went_by(const struct ls_pending *p)
{
    return exact_wait_ns && (__u32)ticks() != p->begin_tick;
}

/* An untimed wait a tick went by in is filed like a timed one, under the key its count
 * goes to (count_untimed): nothing but its lock, flags and begin was kept. */
static __always_inline void as_unwalked(struct ls_pending *p, bool counted_at_begin)
{
    p->kstack = stacks_on ? LS_STACK_UNSAMPLED : -1;
    p->ustack = -1;
    p->holder = -1;
    p->holder_state = LS_HOLDER_NONE;
    p->owner_tid = 0;
    p->owner_stack = 0;
    if (stacks_on && !counted_at_begin)
        count(LS_C_STACK_UNSAMPLED);
}

/* Pops the newest pending wait on lock; returns false if there is none. */
static __always_inline bool pop(struct ls_wait_stack *s, __u64 lock, struct ls_pending *out)
{
    __u32 d = s->depth;

    if (d > LS_NEST)
        d = LS_NEST;
    for (int i = LS_NEST - 1; i >= 0; i--) {
        if ((__u32)i >= d)
            continue;
        if (s->e[i].lock != lock)
            continue;
        *out = s->e[i];
        for (__u32 j = i + 1; j < d && j < LS_NEST; j++)
            count(LS_C_STALE);
        s->depth = i;
        return true;
    }
    return false;
}

static __always_inline int on_end(void *ctx, __u64 lock, int ret)
{
    __u64 id = bpf_get_current_pid_tgid();
    __u32 tid = (__u32)id, zero = 0;
    struct ls_pending p;
    struct ls_wait_stack *s;
    bool found = false;

    s = bpf_map_lookup_elem(&cpu_pending, &zero);
    settle_epoch(s);
    if (s && s->depth)
        found = pop(s, lock, &p);
    if (found && p.tid != tid) {
        /* Its end was never seen (it began before the end program attached,
         * or ran while that program was busy on this CPU): dropped. The
         * current task's own wait, if any, is on its task stack. */
        count(LS_C_STALE);
        found = false;
    }
    if (!found) {
        s = task_stack(false);
        settle_epoch(s);
        if (!s || !s->depth)
            return 0; /* never began here: filtered out, or began before attach */
        found = pop(s, lock, &p);
        if (!found) {
            count(LS_C_UNMATCHED);
            return 0;
        }
    }
    if (ret < 0) {
        count(LS_C_ABORTED);
        return 0;
    }
    bool counted_at_begin = false, ticked = tick_went_by(&p);
    __u64 now;

    if (p.counted) {
        if (!ticked) {
            if (!per_cpu_wait(p.flags)) /* a spinning one was counted at its begin */
                count_untimed(lock, p.flags, time_slot(lock), id, LS_COUNTS_BY_END);
            return 0;
        }
        counted_at_begin = per_cpu_wait(p.flags);
        as_unwalked(&p, counted_at_begin);
    }
    now = now_ns();

    if (holder_scan && p.holder_state == LS_HOLDER_PENDING)
        resolve_pending_holder(&p); /* now, while the holder's recent releases still hold it */

    struct ls_wait_done_ring *r = bpf_map_lookup_elem(&done, &zero);
    struct ls_wait_done now_w, *w = &now_w;
    bool deferred = r && r->head - r->tail < LS_WAIT_DONE;

    if (deferred) {
        /* Reserve before filling: an irq contending meanwhile ends its own
         * wait into the next slot instead of this one. */
        w = &r->e[r->head++ & (LS_WAIT_DONE - 1)];
        w->ready = 0;
        asm volatile("" ::: "memory");
    }
    w->lock = lock;
    w->delta = now - p.ts;
    w->kstack = p.kstack;
    w->flags = p.flags | (ticked ? LS_WAIT_F_TICKED : 0);
    w->holder = p.holder;
    w->holder_state = p.holder_state;
    w->ustack = p.ustack;
    w->owner_tid = p.owner_tid;
    w->owner_stack = p.owner_stack;
    /* A user stack means nothing outside its process: record symbolizes it there. */
    w->tgid = per_tgid || p.ustack >= 0 ? (__u32)(id >> 32) : 0;
    /* The waiter is current here too: read once per wait, at its end. */
    w->cgroup = per_cgroup ? bpf_get_current_cgroup_id() : 0;
    w->counted = counted_at_begin;
    w->weight = p.weight;
    if (!deferred) {
        record_wait(w);
        return 0;
    }
    /* Publish the filled slot: a begin in an irq from here on may drain it. */
    asm volatile("" ::: "memory");
    w->ready = 1;
    return 0;
}

SEC("tp_btf/contention_begin")
int BPF_PROG(wait_begin_btf, void *lock, unsigned int flags)
{
    return on_begin(ctx, (__u64)lock, flags, 2, true);
}

SEC("tp_btf/contention_end")
int BPF_PROG(wait_end_btf, void *lock, int ret)
{
    return on_end(ctx, (__u64)lock, ret);
}

SEC("raw_tp/contention_begin")
int BPF_PROG(wait_begin_raw, void *lock, unsigned int flags)
{
    return on_begin(ctx, (__u64)lock, flags, 2, false);
}

SEC("raw_tp/contention_end")
int BPF_PROG(wait_end_raw, void *lock, int ret)
{
    return on_end(ctx, (__u64)lock, ret);
}

SEC("tracepoint/lock/contention_begin")
int wait_begin_tp(struct trace_event_raw_contention_begin *ctx)
{
    return on_begin(ctx, (__u64)ctx->lock_addr, ctx->flags, 0, false);
}

SEC("tracepoint/lock/contention_end")
int wait_end_tp(struct trace_event_raw_contention_end *ctx)
{
    return on_end(ctx, (__u64)ctx->lock_addr, ctx->ret);
}
