// SPDX-License-Identifier: GPL-2.0-or-later
#pragma once

#include <array>
#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "lockscope/capture/capture.h"

// Which kernel functions are part of the locking (or tracing) machinery rather
// than the code that wanted the lock. A contention stack starts inside these
// (bpf program -> tracepoint -> queued_spin_lock_slowpath -> _raw_spin_lock);
// the lock's caller is the first frame that is not one of them. The one list
// for recording, reports and importers, so a lock gets the same caller
// whichever tool captured it. The scheduler (schedule, __schedule) is not in
// it: a contention tracepoint fires before the waiter sleeps, and in a CPU
// profile schedule is not spinning in a lock.
namespace lockscope {

// "__mutex_lock.constprop.0" -> "__mutex_lock": compiler clones keep the name
// of the function they were made from.
std::string_view baseFunctionName(std::string_view name) noexcept;

// The name a lock key ("<type>@<caller>") gives its caller, the first frame
// of a walked stack once the lock internals are skipped: a compiler clone by
// its base name, an unnamed frame by its address ("0xffffffffc0001045",
// written into `hex`), "" when the frame has neither. Recording keys a lock
// by it and comparisons match keys by it, so the two agree.
std::string_view keyCallerName(const Frame& frame, std::array<char, 24>& hex) noexcept;

// "rwlock:R" -> "rwlock": a lock's type independent of the acquisition mode.
std::string baseLockType(const std::string& type);

// The key of a lock without a symbol: "<base type>@<caller>", the caller by
// keyCallerName, "unknown" without a frame or a name. One rule for record and
// the importers, so the same lock gets the same key whichever tool captured it.
std::string callerLockKey(const std::string& type, const Frame* caller);

// Lock primitives and their slow paths: spinlock/rwlock (_raw_*, queued_*,
// pv/native slow paths, do_raw_*), mutex (mutex_lock*, __mutex_lock*,
// ww_mutex), rwsem (down_read*/down_write*, __down_*, rwsem_down_*), percpu
// rwsem (percpu_down_*, __percpu_down_*, percpu_rwsem_wait), semaphore
// (down, down_interruptible/killable/timeout, __down*), rtmutex and PREEMPT_RT
// locks (rt_mutex_*, rtlock_*, rt_spin_lock, rwbase_*), optimistic spinning
// (osq_lock, mutex_spin_on_owner), plus __lock_text_start.
bool isLockFunction(std::string_view name) noexcept;

// The tracing path between the contention tracepoint and the BPF program
// (bpf_prog_*, bpf_trampoline_*, bpf_trace_run*, __traceiter_contention_*,
// trace_contention_*, perf tracepoint glue).
bool isTracingFunction(std::string_view name) noexcept;

inline bool isLockInternalFrame(std::string_view name) noexcept
{
    return isLockFunction(name) || isTracingFunction(name);
}

// A frame of BPF code in a kernel stack: a trampoline (bpf_trampoline_*), a
// program (bpf_prog_*, or any symbol of kallsyms' [bpf] module, which is also
// how record names its own programs), or, unresolved, an address in x86-64's
// module area, where the BPF JIT puts them (kallsyms was read before they
// were loaded; every module's code has a symbol there). Tracing, never the
// code that wanted the lock.
bool isBpfFrame(const Frame& frame) noexcept;

// A CPU sample spent running BPF: a BPF frame, or the tracepoint dispatcher
// that calls programs (bpf_trace_run*, __bpf_trace_*) at its leaf, before
// the program's frame is pushed. cpu.bpf_samples counts these.
bool runsBpf(const std::vector<Frame>& frames) noexcept;

// Removes the BPF frames of a kernel stack (innermost first) and returns how
// many BPF frames it removed. A function with an fentry/fexit program attached runs its
// body from its trampoline, so it appears twice around it: the body and, as
// the trampoline's caller, its patched first instruction (offset <= 16);
// that outer copy goes too.
size_t dropBpfFrames(std::vector<Frame>& frames);

// The same for the kernel stacks of a capture's locks (sites and holders;
// CPU samples in BPF code are real CPU time and stay), for captures recorded
// before record removed them; adds what it removed to stats.bpf_frames.
void dropBpfFrames(Capture& capture);

// CPU profile leaves counted as "spinning in a lock": the spin-lock entry
// points and queued slow paths (what perf top shows as _raw_spin_lock /
// native_queued_spin_lock_slowpath), plus kvm_wait where a paravirt spinlock
// waits by halting the vCPU.
bool isSpinFunction(std::string_view name) noexcept;

// CPU profile leaves that mean the CPU was idle.
bool isIdleFunction(std::string_view name) noexcept;

// Where the kernel was entered by an interrupt or exception (x86-64's
// asm_* idtentry stubs): the frames outside it belong to whatever the CPU
// was doing when it came.
bool isKernelEntryFunction(std::string_view name) noexcept;
// Of those, the asynchronous ones (device and timer interrupts, IPIs: x86's
// asm_sysvec_* and asm_common_interrupt, arm64's el1h_64_irq): what they
// interrupted is any instruction of any function, unlike a page fault's
// caller, so the frames outside them say nothing about the lock.
bool isAsyncInterruptEntry(std::string_view name) noexcept;

} // namespace lockscope
