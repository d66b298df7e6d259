/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Which events read the clock: shared by the wait and the syscall programs,
 * each object with its own per-CPU state, so each probe has its own budget.
 *
 * Above time_window_events events per LS_STACK_WINDOW_NS on a CPU, only 1 in
 * (events / budget) events of each key (a lock, a syscall) is timed; every
 * event is still counted, and an untimed one adds only to its histogram's
 * count. Userspace gives the untimed ones the times of the timed ones of the
 * same key, weighted by the untimed ones each stands for (untimed_hist.cpp;
 * wait.bpf.c and syscalls.bpf.c say how). The decision reads no clock: the clock reads
 * are what an untimed event saves, with whatever else its probe skips. The
 * per-key countdown keeps a key that occurs now and then timed next to a hot
 * one.
 */
#ifndef LOCKSCOPE_TIME_BUDGET_BPF_H
#define LOCKSCOPE_TIME_BUDGET_BPF_H

#include "common.bpf.h"

const volatile __u32 time_window_events = 0; /* 0: time every event */

#define LS_TIME_SLOTS 16

struct ls_time_tick {
    __u64 window_start;
    __u32 events; /* begun this window */
    __u32 period; /* from the previous window: time 1 in period per key */
    __u64 key[LS_TIME_SLOTS];
    __u32 skip[LS_TIME_SLOTS]; /* untimed events still to come on that key */
};

struct {
    __uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
    __type(key, __u32);
    __type(value, struct ls_time_tick);
    __uint(max_entries, 1);
} time_tick SEC(".maps");

/* This CPU's state, or NULL when every event is timed. */
static __always_inline struct ls_time_tick *time_tick_here(void)
{
    __u32 zero = 0;

    if (!time_window_events)
        return NULL;
    return bpf_map_lookup_elem(&time_tick, &zero);
}

/* Decides without reading the clock: true for an event not to time. slot is
 * the key's countdown (the caller's hash of it, or its index). */
static __always_inline bool untimed_event(struct ls_time_tick *t, __u64 key, __u32 slot)
{
    t->events++;
    slot &= LS_TIME_SLOTS - 1;
    if (t->key[slot] != key || t->skip[slot] == 0)
        return false;
    t->skip[slot]--;
    return true;
}

/*
 * A timed event, now that the clock is read: closes the window if it is over
 * (windows close on timed events only, so one may have lasted longer), then
 * sets how many events of this key go untimed next: period - 1, or with
 * jitter a uniform draw from 0 .. 2 (period - 1), the same on average. A fixed
 * countdown aliases with a workload that repeats itself: a thread that posts
 * then waits, with an even period, would only ever have its posts timed.
 */
static __always_inline void timed_event(struct ls_time_tick *t, __u64 key, __u32 slot, __u64 now, bool jitter)
{
    __u64 elapsed = now - t->window_start;
    __u32 p;

    if (elapsed >= LS_STACK_WINDOW_NS) {
        __u64 per_window = (__u64)t->events * LS_STACK_WINDOW_NS / elapsed;

        t->period = per_window > time_window_events
            ? (__u32)((per_window + time_window_events - 1) / time_window_events) : 1;
        t->window_start = now;
        t->events = 0;
    }
    slot &= LS_TIME_SLOTS - 1;
    t->key[slot] = key;
    p = t->period > 1 ? t->period - 1 : 0;
    t->skip[slot] = jitter && p ? bpf_get_prandom_u32() % (2 * p + 1) : p;
}

#endif /* LOCKSCOPE_TIME_BUDGET_BPF_H */
