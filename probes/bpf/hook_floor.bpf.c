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
