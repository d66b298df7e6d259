// SPDX-License-Identifier: GPL-2.0-or-later
#include "app/processheap.h"

#include <malloc.h>

#include "lockscope/util/huge_page_heap.h"

namespace lockscope::gui {

void useGuiHeap(char** argv)
{
    useHugePageHeap(argv);
    mallopt(M_ARENA_MAX, 1); // NOLINT(concurrency-mt-unsafe): called before any thread exists
}

void returnFreedHeap()
{
    malloc_trim(0);
}

} // namespace lockscope::gui
