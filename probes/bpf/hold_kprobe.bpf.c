// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Spinlock hold time via kprobe/kretprobe, for kernels where fentry is not
 * allowed. A kretprobe has no arguments, so the lock pointer is saved at
 * entry on a per-CPU stack (entries nest only through irqs, which return
 * before the interrupted call does, so LIFO order holds).
 */
#include "hold_common.bpf.h"

char LICENSE[] SEC("license") = "Dual BSD/GPL";

/*
 * The saved arguments, a ring indexed by a free-running depth. Each entry
 * also keeps the stack pointer at entry, and the return finds its entry by
 * stack pointer instead of trusting the depth: an entry whose return never
 * runs its program (the kretprobe missed it, or the program was skipped for
 * re-entry) would otherwise shift every later pop by one, and on the Debian
 * 6.1 guests the depth drifted by ~100 within seconds, so every pop read a
 * wrong slot and no hold was recorded at all. Entries left over by such
 * misses are dropped when a return matches an entry below them.
 */
struct ls_arg_stack {
    __u32 depth;
    __u32 pad;
    __u64 lock[LS_HOLD_NEST];
    __u64 sp[LS_HOLD_NEST];
    __u64 ts[LS_HOLD_NEST]; /* when the call began: the acquisition's wait ends at its return */
};

struct {
    __uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
    __type(key, __u32);
    __type(value, struct ls_arg_stack);
    __uint(max_entries, 1);
} lock_args SEC(".maps");

/*
 * At the entry kprobe sp points at the return address; the return handler
 * sees it one word higher or so, depending on the trampoline. Calls nested in
 * one context have their own, lower stack pointers; irqs run on another stack.
 */
#define LS_SP_SLACK 32

static __always_inline void push_arg(__u64 lock, __u64 sp)
{
    __u32 zero = 0, d, i;
    struct ls_arg_stack *s = bpf_map_lookup_elem(&lock_args, &zero);

    if (!s)
        return;
    d = s->depth;
    i = d & (LS_HOLD_NEST - 1);
    /* Reserve first: an irq that pushes and pops meanwhile stays above us. */
    s->sp[i] = 0;
    s->depth = d + 1;
    s->lock[i] = lock;
    s->ts[i] = bpf_ktime_get_ns();
    s->sp[i] = sp;
}

/* The lock argument of the call returning at sp (0: none) and, in *entry_ts, when it began. */
static __always_inline __u64 pop_arg(__u64 sp, __u64 *entry_ts)
{
    __u32 zero = 0, d;
    struct ls_arg_stack *s = bpf_map_lookup_elem(&lock_args, &zero);

    if (!s)
        return 0;
    d = s->depth;
    for (__u32 k = 0; k < LS_HOLD_NEST; k++) {
        __u32 i = (d - 1 - k) & (LS_HOLD_NEST - 1);
        __u64 at = s->sp[i];

        if (k >= d)
            break;
        if (at && at - sp + LS_SP_SLACK <= 2 * LS_SP_SLACK) {
            __u64 lock = s->lock[i];

            *entry_ts = s->ts[i];
            s->sp[i] = 0;
            s->depth = d - 1 - k;
            return lock;
        }
    }
    return 0;
}

#define LOCK_PAIR(fn, variant, needs_ret)                                      \
    SEC("kprobe/" #fn)                                                         \
    int BPF_KPROBE(enter_##fn, void *lock)                                     \
    {                                                                          \
        push_arg((__u64)lock, PT_REGS_SP(ctx));                                \
        return 0;                                                              \
    }                                                                          \
    SEC("kretprobe/" #fn)                                                      \
    int BPF_KRETPROBE(exit_##fn, long ret)                                     \
    {                                                                          \
        __u64 entry_ts = 0;                                                    \
        __u64 lock = pop_arg(PT_REGS_SP(ctx), &entry_ts);                      \
        if (lock && (!(needs_ret) || ret))                                     \
            on_acquired(ctx, lock, variant, (needs_ret) ? 0 : entry_ts);       \
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
