// SPDX-License-Identifier: GPL-2.0-or-later
#pragma once

namespace lockscope::gui {

// The heap the GUI opens captures on: glibc's heap on transparent huge
// pages (lockscope/util/huge_page_heap.h: re-executes the program once), and
// one heap for every thread. glibc gives each thread that allocates its own
// arena, and a thread's arena grows a few pages at a time (an mprotect each,
// 22k for one capture) on 4-KiB pages; the main heap grows by brk on huge
// pages. The loader threads fill almost all of a big capture's memory: on
// their own arenas reading one took 0.7 s, 0.2 s on the main heap. Call it
// first in main, before any thread exists; the app and its benchmark both do.
void useGuiHeap(char** argv);

// Hands the heap's free pages back to the system. A comparison frees its
// working memory (each side's call tree, the interned stacks) in pieces
// glibc keeps in its bins, and what the window makes next does not fill
// them all: 5 MB of the GUI compare's peak for the bench's 100k-stack pair.
void returnFreedHeap();

} // namespace lockscope::gui
