// SPDX-License-Identifier: GPL-2.0-or-later
#pragma once

namespace lockscope {

// Re-executes this program once with glibc's malloc backing its heap with
// transparent huge pages (GLIBC_TUNABLES=glibc.malloc.hugetlb=1) when the
// kernel gives them only on request (THP "madvise", Debian's default).
// Loading a big capture is mostly first touches of fresh heap: with 4-KiB
// pages a third of a compare's time went to page faults (dearer still
// under a hypervisor). glibc reads the tunable only at start-up, hence the
// exec; the variable is put back as it was right after it, so nothing this
// process starts inherits it. LOCKSCOPE_HUGE_HEAP=off keeps 4-KiB pages.
// Call it first in main, before any thread exists: it reads and sets the
// environment. Returns when no exec is needed or the exec fails.
void useHugePageHeap(char** argv);

// While one exists, glibc's arenas grow a whole heap (64 MiB) at a time.
// glibc advises a thread's heap for huge pages only when it makes it; what it
// adds to it later has no advice, so a capture read on a second thread got
// 4-KiB pages only (the reads of a comparison ended 0.3-0.5 s apart). Made
// around reading captures on several threads: its end puts glibc's pad back,
// so what is freed at the top of a heap is given back as before (a pad for
// the whole run kept 40-80 MB more at compare's peak). glibc's mmap threshold
// stops moving once the pad is set: the first one sets it to 32 MiB, where
// glibc would have moved it. Nests; threads may make their own.
class WholeHeapGrowth {
public:
    WholeHeapGrowth();
    ~WholeHeapGrowth();
    WholeHeapGrowth(const WholeHeapGrowth&) = delete;
    WholeHeapGrowth& operator=(const WholeHeapGrowth&) = delete;
};

} // namespace lockscope
