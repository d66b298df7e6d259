/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Which events get a stack walk: shared by the wait and hold programs, each
 * object with its own per-CPU state, so each probe has its own budget.
 */
#ifndef LOCKSCOPE_STACK_BUDGET_BPF_H
#define LOCKSCOPE_STACK_BUDGET_BPF_H

#include "common.bpf.h"

/*
 * Stack walks are nearly all of a wait or hold program's cost (the
 * unwinder's fixed part, whatever the depth: probes/README.md has the
 * per-event figures), and the event rate is the workload's: a hot lock can contend
 * 10^5-10^6 times a second, and the hold probe sees every
 * acquisition. An event not walked keeps its lock, flags and time under
 * LS_STACK_UNSAMPLED, so per-lock counts and histograms stay exact and only
 * the call paths are sampled.
 *
 * stack_sample > 1: walk 1 in N events per CPU. Otherwise, with
 * stack_window_walks set, a budget: each CPU walks at most that many stacks
 * per LS_STACK_WINDOW_NS: the first event on each lock in the window, then
 * every event while the previous window stayed within the budget, else each
 * with probability 1 / (its events / budget), so the walks spread over the
 * window rather than bunch at its start; the cap bounds a burst.
 *
 * The walked events must be a fair sample of each lock's events: reports
 * share the unwalked ones out over the walked call paths in proportion
 * (core/capture site_shares.h). A counter (every Nth event) is not: a
 * thread that calls A, A, A, B in a loop under period 4 would be walked at
 * the same call site every time. So the draw is random; the first event per
 * lock and window is walked whatever the draw (a 1-in-10 share of a hot
 * lock's walks at the default budget, and, with no reason to favour one
 * path, the fairness test in collector/tests bounds its bias).
 */
const volatile __u32 stack_sample = 1;
const volatile __u32 stack_window_walks = 0;

#define LS_SEEN_SLOTS 64

struct ls_stack_tick {
    __u64 tick;
    __u64 window_start;
    __u32 waits;   /* events this window */
    __u32 walks;   /* this window */
    __u32 period;  /* from the previous window; 0, 1: every wait */
    __u32 window;  /* sequence number of this window */
    /* Locks walked this window (direct-mapped by address): the first event
     * on a lock in a window is walked whatever the period, so a rarely
     * contended lock next to a hot one still gets a call path and a key. */
    __u64 seen_lock[LS_SEEN_SLOTS];
    __u32 seen_window[LS_SEEN_SLOTS];
};

struct {
    __uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
    __type(key, __u32);
    __type(value, struct ls_stack_tick);
    __uint(max_entries, 1);
} stack_tick SEC(".maps");

static __always_inline bool walk_this_stack(__u64 now, __u64 lock)
{
    __u32 zero = 0, slot;
    struct ls_stack_tick *t;

    if (stack_sample <= 1 && !stack_window_walks)
        return true;
    t = bpf_map_lookup_elem(&stack_tick, &zero);
    if (!t)
        return true;
    if (stack_sample > 1)
        return t->tick++ % stack_sample == 0;
    if (now - t->window_start >= LS_STACK_WINDOW_NS) {
        t->period = (t->waits + stack_window_walks - 1) / stack_window_walks;
        t->window_start = now;
        t->window++;
        t->waits = 0;
        t->walks = 0;
    }
    t->waits++;
    if (t->walks >= stack_window_walks)
        return false;
    slot = (__u32)((lock >> 4) * 0x9E3779B97F4A7C15ULL >> 58) & (LS_SEEN_SLOTS - 1);
    if (t->seen_lock[slot] != lock || t->seen_window[slot] != t->window) {
        t->seen_lock[slot] = lock;
        t->seen_window[slot] = t->window;
    } else if (t->period > 1 && bpf_get_prandom_u32() % t->period != 0) {
        return false;
    }
    t->walks++;
    return true;
}

#endif /* LOCKSCOPE_STACK_BUDGET_BPF_H */
