// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * On-CPU sampling (cpu-clock perf events on every CPU): counts kernel stacks.
 * Samples taken in user mode have no kernel stack; they are counted apart
 * (key kstack = -1) so the lock share is over all samples, like perf top.
 */
#include "common.bpf.h"

char LICENSE[] SEC("license") = "Dual BSD/GPL";

struct {
    __uint(type, BPF_MAP_TYPE_HASH);
    __type(key, struct ls_cpu_key);
    __type(value, __u64);
    __uint(max_entries, 16384);
} cpu_counts SEC(".maps");

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

SEC("perf_event")
int cpu_sample(struct bpf_perf_event_data *ctx)
{
    struct ls_cpu_key key = { .kstack = -1 };
    __u64 one = 1, *v;

    count(LS_C_CPU_SAMPLES);
    /* Ring 3 in the interrupted context: user mode. */
    if ((sample_cs(ctx) & 3) != 0)
        count(LS_C_CPU_USER);
    else
        key.kstack = stack_id(ctx, 0);
    v = bpf_map_lookup_elem(&cpu_counts, &key);
    if (v) {
        __sync_fetch_and_add(v, 1);
        return 0;
    }
    if (bpf_map_update_elem(&cpu_counts, &key, &one, BPF_NOEXIST)) {
        v = bpf_map_lookup_elem(&cpu_counts, &key);
        if (v)
            __sync_fetch_and_add(v, 1);
        else
            count(LS_C_MAP_FULL);
    }
    return 0;
}
