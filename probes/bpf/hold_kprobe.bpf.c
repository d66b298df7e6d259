// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Spinlock hold time via kprobe/kretprobe, for kernels where fentry is not
 * allowed. A kretprobe has no arguments, so the lock pointer is saved at
 * entry on a per-CPU stack (entries nest only through irqs, which return
 * before the interrupted call does, so LIFO order holds).
 */
#include "hold_common.bpf.h"

char LICENSE[] SEC("license") = "Dual BSD/GPL";

struct ls_arg_stack {
    __u32 depth;
    __u32 pad;
    __u64 lock[LS_HOLD_NEST];
};

struct {
    __uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
    __type(key, __u32);
    __type(value, struct ls_arg_stack);
    __uint(max_entries, 1);
} lock_args SEC(".maps");

static __always_inline void push_arg(__u64 lock)
{
    __u32 zero = 0;
    struct ls_arg_stack *s = bpf_map_lookup_elem(&lock_args, &zero);

    if (!s)
        return;
    __u32 d = s->depth;
    if (d >= LS_HOLD_NEST) {
        /* Still count the depth so the matching return pops the right slot. */
        s->depth = d + 1;
        return;
    }
    s->lock[d] = 0;
    s->depth = d + 1;
    s->lock[d] = lock;
}

static __always_inline __u64 pop_arg(void)
{
    __u32 zero = 0;
    struct ls_arg_stack *s = bpf_map_lookup_elem(&lock_args, &zero);

    if (!s || s->depth == 0)
        return 0;
    __u32 d = s->depth - 1;
    __u64 lock = d < LS_HOLD_NEST ? s->lock[d & (LS_HOLD_NEST - 1)] : 0;
    s->depth = d;
    return lock;
}

#define LOCK_PAIR(fn, variant, needs_ret)                                      \
    SEC("kprobe/" #fn)                                                         \
    int BPF_KPROBE(enter_##fn, void *lock)                                     \
    {                                                                          \
        push_arg((__u64)lock);                                                 \
        return 0;                                                              \
    }                                                                          \
    SEC("kretprobe/" #fn)                                                      \
    int BPF_KRETPROBE(exit_##fn, long ret)                                     \
    {                                                                          \
        __u64 lock = pop_arg();                                                \
        if (lock && (!(needs_ret) || ret))                                     \
            on_acquired(ctx, lock, variant);                                   \
        return 0;                                                              \
    }

LOCK_PAIR(_raw_spin_lock, LS_HOLD_SPIN, 0)
LOCK_PAIR(_raw_spin_lock_irq, LS_HOLD_SPIN_IRQ, 0)
LOCK_PAIR(_raw_spin_lock_irqsave, LS_HOLD_SPIN_IRQSAVE, 0)
LOCK_PAIR(_raw_spin_lock_bh, LS_HOLD_SPIN_BH, 0)
LOCK_PAIR(_raw_spin_trylock, LS_HOLD_TRYLOCK, 1)
LOCK_PAIR(_raw_spin_trylock_bh, LS_HOLD_TRYLOCK_BH, 1)

#define UNLOCK(fn)                                                             \
    SEC("kprobe/" #fn)                                                         \
    int BPF_KPROBE(enter_##fn, void *lock)                                     \
    {                                                                          \
        on_release((__u64)lock);                                               \
        return 0;                                                              \
    }

UNLOCK(_raw_spin_unlock)
UNLOCK(_raw_spin_unlock_irq)
UNLOCK(_raw_spin_unlock_irqrestore)
UNLOCK(_raw_spin_unlock_bh)
