// SPDX-License-Identifier: GPL-2.0-or-later
#pragma once

#include <sys/syscall.h>
#include <unistd.h>

// A three-argument system call issued inline, so the user-mode instruction
// pointer the kernel sees is in the function it is inlined into: libc's
// wrappers have no frame pointer and would hide their caller from the
// kernel's frame-pointer unwinder (the user-stack tests name that caller).
__attribute__((always_inline)) inline long rawSyscall3(long nr, long a, long b, long c)
{
#if defined(__x86_64__)
    long ret;
    __asm__ volatile("syscall" : "=a"(ret) : "0"(nr), "D"(a), "S"(b), "d"(c) : "rcx", "r11", "memory");
    return ret;
#elif defined(__aarch64__)
    register long x8 __asm__("x8") = nr;
    register long x0 __asm__("x0") = a;
    register long x1 __asm__("x1") = b;
    register long x2 __asm__("x2") = c;
    __asm__ volatile("svc #0" : "+r"(x0) : "r"(x8), "r"(x1), "r"(x2) : "memory");
    return x0;
#else
    return syscall(nr, a, b, c);
#endif
}
