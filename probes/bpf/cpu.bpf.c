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

SEC("perf_event")
int cpu_sample(struct bpf_perf_event_data *ctx)
{
    struct ls_cpu_key key = { .kstack = -1 };
    __u64 one = 1, *v;

    count(LS_C_CPU_SAMPLES);
    /* Ring 3 in the interrupted context: user mode. */
    if ((BPF_CORE_READ(ctx, regs.cs) & 3) != 0)
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
