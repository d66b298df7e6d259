// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Spinlock hold time via fexit on the lock functions (the lock is held once
 * they return; trylocks only when they return non-zero) and fentry on the
 * unlocks. Userspace turns off, with bpf_program__set_autoload, every program
 * whose function is missing from the running kernel's BTF.
 */
/*
 * A stack walked from an fexit program starts with the program and its
 * trampoline, which have no kallsyms name the symbolizer resolves (6.1 guests:
 * two unnamed frames, then _raw_spin_lock, then the caller). Left in, the
 * first unnamed frame became every dynamic lock's call site, so keys were
 * trampoline addresses that differ between boots and builds.
 */
#define LS_HOLD_STACK_SKIP 2
#include "hold_common.bpf.h"

char LICENSE[] SEC("license") = "Dual BSD/GPL";

/*
 * The lock argument as a number. The verifier types ctx[0] as a BTF pointer
 * (raw_spinlock_t *), and 6.1 refuses the masking and hashing hold_add does
 * on such a pointer ("math between ptr_ pointer and ... is not allowed").
 * bpf_get_func_arg (5.17+) returns it as a scalar and is inlined by the
 * verifier, so it costs no helper call.
 */
static __always_inline __u64 lock_arg(void *ctx)
{
    __u64 lock = 0;

    bpf_get_func_arg(ctx, 0, &lock);
    return lock;
}

/*
 * The lock calls' entries, so that their fexit can time the acquisition (the
 * spin). Trylocks do not spin: no entry program.
 */
SEC("fentry/_raw_spin_lock")
int BPF_PROG(enter_lock, raw_spinlock_t *lock)
{
    entry_push(lock_arg(ctx));
    return 0;
}

SEC("fentry/_raw_spin_lock_irq")
int BPF_PROG(enter_lock_irq, raw_spinlock_t *lock)
{
    entry_push(lock_arg(ctx));
    return 0;
}

SEC("fentry/_raw_spin_lock_irqsave")
int BPF_PROG(enter_lock_irqsave, raw_spinlock_t *lock)
{
    entry_push(lock_arg(ctx));
    return 0;
}

SEC("fentry/_raw_spin_lock_bh")
int BPF_PROG(enter_lock_bh, raw_spinlock_t *lock)
{
    entry_push(lock_arg(ctx));
    return 0;
}

SEC("fexit/_raw_spin_lock")
int BPF_PROG(hold_lock, raw_spinlock_t *lock)
{
    on_acquired(ctx, lock_arg(ctx), LS_HOLD_SPIN, entry_pop(lock_arg(ctx)));
    return 0;
}

SEC("fexit/_raw_spin_lock_irq")
int BPF_PROG(hold_lock_irq, raw_spinlock_t *lock)
{
    on_acquired(ctx, lock_arg(ctx), LS_HOLD_SPIN_IRQ, entry_pop(lock_arg(ctx)));
    return 0;
}

SEC("fexit/_raw_spin_lock_irqsave")
int BPF_PROG(hold_lock_irqsave, raw_spinlock_t *lock, unsigned long ret)
{
    on_acquired(ctx, lock_arg(ctx), LS_HOLD_SPIN_IRQSAVE, entry_pop(lock_arg(ctx)));
    return 0;
}

SEC("fexit/_raw_spin_lock_bh")
int BPF_PROG(hold_lock_bh, raw_spinlock_t *lock)
{
    on_acquired(ctx, lock_arg(ctx), LS_HOLD_SPIN_BH, entry_pop(lock_arg(ctx)));
    return 0;
}

SEC("fexit/_raw_spin_trylock")
int BPF_PROG(hold_trylock, raw_spinlock_t *lock, int ret)
{
    if (ret)
        on_acquired(ctx, lock_arg(ctx), LS_HOLD_TRYLOCK, 0);
    return 0;
}

SEC("fexit/_raw_spin_trylock_bh")
int BPF_PROG(hold_trylock_bh, raw_spinlock_t *lock, int ret)
{
    if (ret)
        on_acquired(ctx, lock_arg(ctx), LS_HOLD_TRYLOCK_BH, 0);
    return 0;
}

SEC("fentry/_raw_spin_unlock")
int BPF_PROG(hold_unlock, raw_spinlock_t *lock)
{
    on_release(lock_arg(ctx));
    return 0;
}

SEC("fentry/_raw_spin_unlock_irq")
int BPF_PROG(hold_unlock_irq, raw_spinlock_t *lock)
{
    on_release(lock_arg(ctx));
    return 0;
}

SEC("fentry/_raw_spin_unlock_irqrestore")
int BPF_PROG(hold_unlock_irqrestore, raw_spinlock_t *lock, unsigned long flags)
{
    on_release(lock_arg(ctx));
    return 0;
}

SEC("fentry/_raw_spin_unlock_bh")
int BPF_PROG(hold_unlock_bh, raw_spinlock_t *lock)
{
    on_release(lock_arg(ctx));
    return 0;
}
