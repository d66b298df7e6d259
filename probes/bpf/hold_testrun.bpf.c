// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Test harness only: drives the hold-time logic of hold_common.bpf.h (the
 * exact code the fentry and kprobe programs run) from raw_tp programs, which
 * BPF_PROG_TEST_RUN can execute with synthetic (lock, variant) arguments on
 * kernels that refuse fentry and kprobes. Never attached.
 */
#include "hold_common.bpf.h"

char LICENSE[] SEC("license") = "Dual BSD/GPL";

SEC("raw_tp/contention_begin")
int BPF_PROG(test_acquired, __u64 lock, __u64 variant)
{
    on_acquired(ctx, lock, (__u32)variant, 0);
    return 0;
}

/* A lock call's two ends, as the fentry backend runs them: its entry, then
 * its return (which times the acquisition from the pending entry). */
SEC("raw_tp/contention_begin")
int BPF_PROG(test_lock_enter, __u64 lock)
{
    entry_push(lock);
    return 0;
}

SEC("raw_tp/contention_begin")
int BPF_PROG(test_lock_return, __u64 lock, __u64 variant)
{
    on_acquired(ctx, lock, (__u32)variant, entry_pop(lock));
    return 0;
}

SEC("raw_tp/contention_end")
int BPF_PROG(test_release, __u64 lock)
{
    on_release(lock);
    return 0;
}

/*
 * The two halves of an acquisition and of a release, run as separate
 * programs so that a test can put an "irq" (other test_acquired /
 * test_release runs) between them, where a real irq can come. The state
 * between the halves waits in these maps (kept off the skeleton's .bss,
 * whose types userspace would need).
 */
struct acquiring_state {
    struct ls_acquire_at at;
    bool pushed;
};

struct releasing_state {
    struct ls_release_at at;
    bool found;
};

struct {
    __uint(type, BPF_MAP_TYPE_ARRAY);
    __type(key, __u32);
    __type(value, struct acquiring_state);
    __uint(max_entries, 1);
} acquiring SEC(".maps");

struct {
    __uint(type, BPF_MAP_TYPE_ARRAY);
    __type(key, __u32);
    __type(value, struct releasing_state);
    __uint(max_entries, 1);
} releasing SEC(".maps");

SEC("raw_tp/contention_begin")
int BPF_PROG(test_acquire_push, __u64 lock, __u64 variant)
{
    __u32 zero = 0;
    struct acquiring_state *a = bpf_map_lookup_elem(&acquiring, &zero);

    if (a)
        a->pushed = acquire_push(lock, (__u32)variant, &a->at);
    return 0;
}

SEC("raw_tp/contention_begin")
int BPF_PROG(test_acquire_publish, __u64 lock)
{
    __u32 zero = 0;
    struct acquiring_state *a = bpf_map_lookup_elem(&acquiring, &zero);

    if (a && a->pushed)
        acquire_publish(lock, &a->at, LS_STACK_UNSAMPLED);
    return 0;
}

SEC("raw_tp/contention_end")
int BPF_PROG(test_release_find, __u64 lock)
{
    __u32 zero = 0;
    struct releasing_state *r = bpf_map_lookup_elem(&releasing, &zero);

    if (r) {
        r->at.now = bpf_ktime_get_ns();
        r->found = release_find(lock, &r->at);
    }
    return 0;
}

SEC("raw_tp/contention_end")
int BPF_PROG(test_release_commit, __u64 lock)
{
    __u32 zero = 0;
    struct releasing_state *r = bpf_map_lookup_elem(&releasing, &zero);

    if (r)
        release_from(lock, &r->at, r->found);
    return 0;
}
