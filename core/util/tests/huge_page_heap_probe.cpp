// SPDX-License-Identifier: GPL-2.0-or-later
// For huge_page_heap_test: calls useHugePageHeap, touches 64 MiB of heap,
// then prints what the test checks, a line each:
//   now_env=<GLIBC_TUNABLES as the program and its children see it>
//   anon_huge_kb=<AnonHugePages of the process>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iostream>
#include <string>
#include <vector>

#include "lockscope/util/huge_page_heap.h"

namespace {
long anonHugeKb()
{
    std::ifstream in("/proc/self/smaps_rollup");
    std::string key;
    long kb = 0;
    while (in >> key) {
        if (key == "AnonHugePages:" && in >> kb)
            return kb;
        in.ignore(1 << 20, '\n');
    }
    return -1;
}
} // namespace

int main(int /*argc*/, char** argv)
{
    lockscope::useHugePageHeap(argv);
    // Many small blocks, as a capture's model is: they come from the heap
    // (brk), not from one mmap per block.
    std::vector<char*> blocks;
    for (int i = 0; i < 64 * 1024; ++i) {
        auto* b = static_cast<char*>(std::malloc(1024));
        std::memset(b, 1, 1024);
        blocks.push_back(b);
    }
    const char* now = std::getenv("GLIBC_TUNABLES");
    std::cout << "now_env=" << (now ? now : "(unset)") << "\n"
              << "anon_huge_kb=" << anonHugeKb() << "\n";
    for (char* b : blocks)
        std::free(b);
    return 0;
}
