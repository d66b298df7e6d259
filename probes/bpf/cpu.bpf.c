// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * On-CPU sampling (cpu-clock perf events on every CPU): counts kernel stacks.
 * Samples taken in user mode have no kernel stack; they are counted apart
 * (key kstack = -1) so the lock share is over all samples, like perf top.
 * A kernel-mode sample whose stack cannot be kept (the stack map or
 * cpu_counts is full, or the walk failed) is still counted, by the function
 * it interrupted: the lock share depends on the leaf alone, and a fork-heavy
 * machine fills the stack maps within minutes.
 */
#include "common.bpf.h"

char LICENSE[] SEC("license") = "Dual BSD/GPL";

struct {
    __uint(type, BPF_MAP_TYPE_HASH);
    __type(key, struct ls_cpu_key);
    __type(value, __u64);
    __uint(max_entries, 16384);
} cpu_counts SEC(".maps");

/* The kernel functions the lock share is made of (lock and idle code), sorted;
 * set by userspace before load. */
const volatile struct ls_ip_range cpu_leaf_ranges[LS_CPU_LEAF_RANGES] = {};
const volatile __u32 cpu_leaf_nranges = 0;

/* Stackless kernel-mode samples: slot i for cpu_leaf_ranges[i], the last slot
 * for any other kernel code. An array: it cannot fill. */
struct {
    __uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
    __type(key, __u32);
    __type(value, __u64);
    __uint(max_entries, LS_CPU_LEAF_RANGES + 1);
} cpu_unstacked SEC(".maps");

/*
 * The interrupted code segment, by a direct context load, which the verifier
 * rewrites into a read of the sample's real registers. BPF_CORE_READ(ctx, ...)
 * would read memory past the kernel's context (it holds a pointer to the
 * registers, not the registers): garbage that sent most user-mode samples into
 * a kernel stack walk failing with EFAULT. The verifier takes only 8-byte
 * loads of the registers, and kernels with FRED made cs a 2-byte member of a
 * union at the same offset: load the whole word.
 */
static __always_inline __u64 sample_cs(struct bpf_perf_event_data *ctx)
{
    return *(__u64 *)((char *)ctx + __builtin_offsetof(struct bpf_perf_event_data, regs)
        + __builtin_offsetof(struct pt_regs, cs));
}

/* The interrupted instruction, loaded like sample_cs. */
static __always_inline __u64 sample_ip(struct bpf_perf_event_data *ctx)
{
    return *(__u64 *)((char *)ctx + __builtin_offsetof(struct bpf_perf_event_data, regs)
        + __builtin_offsetof(struct pt_regs, ip));
}

static __always_inline __u32 leaf_slot(__u64 ip)
{
    for (__u32 i = 0; i < LS_CPU_LEAF_RANGES; i++) {
        if (i >= cpu_leaf_nranges)
            break;
        if (ip >= cpu_leaf_ranges[i].begin && ip < cpu_leaf_ranges[i].end)
            return i;
    }
    return LS_CPU_LEAF_RANGES;
}

static __always_inline void count_unstacked(struct bpf_perf_event_data *ctx)
{
    __u32 slot = leaf_slot(sample_ip(ctx));
    __u64 *v = bpf_map_lookup_elem(&cpu_unstacked, &slot);

    count(LS_C_CPU_UNSTACKED);
    if (v)
        __sync_fetch_and_add(v, 1); /* per-CPU, but an NMI-context sample may nest */
}

/* Adds one to key's count; false when cpu_counts is full or its bucket
 * busy (*err says which). */
static __always_inline bool count_stack(const struct ls_cpu_key *key, long *err)
{
    __u64 one = 1, *v = bpf_map_lookup_elem(&cpu_counts, key);

    *err = 0;
    if (!v && (*err = bpf_map_update_elem(&cpu_counts, key, &one, BPF_NOEXIST)) == 0)
        return true;
    if (!v)
        v = bpf_map_lookup_elem(&cpu_counts, key); /* another CPU created it meanwhile */
    if (!v)
        return false;
    __sync_fetch_and_add(v, 1);
    return true;
}

SEC("perf_event")
int cpu_sample(struct bpf_perf_event_data *ctx)
{
    struct ls_cpu_key key = { .kstack = -1 };
    long err;

    count(LS_C_CPU_SAMPLES);
    /* Ring 3 in the interrupted context: user mode. */
    if ((sample_cs(ctx) & 3) != 0) {
        count(LS_C_CPU_USER);
        if (!count_stack(&key, &err))
            map_miss_n(err, 1);
        return 0;
    }
    key.kstack = stack_id(ctx, 0);
    if (key.kstack < 0 || !count_stack(&key, &err))
        count_unstacked(ctx);
    return 0;
}
