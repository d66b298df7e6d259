// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Benchmark harness (bench/record), never attached by record: contention
 * programs that do nothing, so the lock:contention_* hooks' own cost can be
 * measured beside the real wait programs.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

char LICENSE[] SEC("license") = "Dual BSD/GPL";

SEC("tp_btf/contention_begin")
int BPF_PROG(floor_begin, void *lock, unsigned int flags)
{
    return 0;
}

SEC("tp_btf/contention_end")
int BPF_PROG(floor_end, void *lock, int ret)
{
    return 0;
}

/* The same for raw_syscalls, the syscall probe's hook on kernels that refuse
 * fentry: every syscall of every task then takes the tracing entry path. */
SEC("raw_tp/sys_enter")
int floor_sys_enter(struct bpf_raw_tracepoint_args *ctx)
{
    return 0;
}

SEC("raw_tp/sys_exit")
int floor_sys_exit(struct bpf_raw_tracepoint_args *ctx)
{
    return 0;
}
