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
    on_acquired(ctx, lock, (__u32)variant);
    return 0;
}

SEC("raw_tp/contention_end")
int BPF_PROG(test_release, __u64 lock)
{
    on_release(lock);
    return 0;
}
