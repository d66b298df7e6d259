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

} // namespace lockscope
