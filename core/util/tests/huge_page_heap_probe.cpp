// SPDX-License-Identifier: GPL-2.0-or-later
// For huge_page_heap_test: calls useHugePageHeap, touches 64 MiB of heap,
// then 64 MiB more on a second thread (its own arena) under a
// WholeHeapGrowth, and prints what the test checks, a line each:
//   now_env=<GLIBC_TUNABLES as the program and its children see it>
//   anon_huge_kb=<AnonHugePages of the process after the first 64 MiB>
//   thread_anon_huge_kb=<what the second thread's 64 MiB added to it>
//   kept_after_free_kb=<Rss after freeing the thread's blocks, over the Rss before them>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iostream>
#include <string>
#include <thread>
#include <vector>

#include "lockscope/util/huge_page_heap.h"

namespace {
long rollupKb(const std::string& field)
{
    std::ifstream in("/proc/self/smaps_rollup");
    std::string key;
    long kb = 0;
    while (in >> key) {
        if (key == field && in >> kb)
            return kb;
        in.ignore(1 << 20, '\n');
    }
    return -1;
}
long anonHugeKb() { return rollupKb("AnonHugePages:"); }
} // namespace

int main(int /*argc*/, char** argv)
{
    lockscope::useHugePageHeap(argv);
    // Many small blocks, as a capture's model is: they come from the heap
    // (brk, or a thread's arena), not from one mmap per block.
    auto touch64MiB = [](std::vector<char*>& blocks) {
        for (int i = 0; i < 64 * 1024; ++i) {
            auto* b = static_cast<char*>(std::malloc(1024));
            std::memset(b, 1, 1024);
            blocks.push_back(b);
        }
    };
    std::vector<char*> blocks, threadBlocks;
    threadBlocks.reserve(size_t{64} * 1024); // not on the thread's heap, where it would keep its top
    touch64MiB(blocks);
    const long mainKb = anonHugeKb(), rssBefore = rollupKb("Rss:");
    {
        const lockscope::WholeHeapGrowth growth;
        std::thread([&] { touch64MiB(threadBlocks); }).join();
    }
    const long threadKb = anonHugeKb() - mainKb;
    for (char* b : threadBlocks) // the pad is back: the arena gives the memory back
        std::free(b);
    const char* now = std::getenv("GLIBC_TUNABLES");
    std::cout << "now_env=" << (now ? now : "(unset)") << "\n"
              << "anon_huge_kb=" << mainKb << "\n"
              << "thread_anon_huge_kb=" << threadKb << "\n"
              << "kept_after_free_kb=" << rollupKb("Rss:") - rssBefore << "\n";
    for (char* b : blocks)
        std::free(b);
    return 0;
}
