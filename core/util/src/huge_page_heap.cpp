// SPDX-License-Identifier: GPL-2.0-or-later
#include "lockscope/util/huge_page_heap.h"

#include <cstdlib>
#include <cstring>
#include <fstream>
#include <mutex>
#include <string>

#include <malloc.h>

#include <unistd.h>

namespace lockscope {
namespace {

constexpr const char* kTunables = "GLIBC_TUNABLES";
constexpr const char* kHugeTlb = "glibc.malloc.hugetlb=1";
// Set across the exec only: what GLIBC_TUNABLES was ("=" + value, or "-" for unset).
constexpr const char* kSaved = "LOCKSCOPE_TUNABLES_BEFORE_EXEC";

bool hugePagesOnRequestOnly()
{
    std::ifstream in("/sys/kernel/mm/transparent_hugepage/enabled");
    std::string line;
    return std::getline(in, line) && line.find("[madvise]") != std::string::npos;
}

void restoreTunables(const char* saved)
{
    if (saved[0] == '=')
        setenv(kTunables, saved + 1, 1);
    else
        unsetenv(kTunables);
    unsetenv(kSaved);
}

// glibc's default pad (mallopt(3)), what a WholeHeapGrowth's end puts back.
constexpr int kDefaultTopPad = 128 << 10;
constexpr int kHeapSize = 64 << 20; // glibc's HEAP_MAX_SIZE on 64-bit
constexpr int kMmapThreshold = 32 << 20; // glibc's DEFAULT_MMAP_THRESHOLD_MAX on 64-bit

std::mutex growthMutex;
unsigned growthUsers = 0;
bool thresholdSet = false;

} // namespace

// glibc's mallopt takes the main arena's lock; growthMutex orders the guards.
// NOLINTBEGIN(concurrency-mt-unsafe)
WholeHeapGrowth::WholeHeapGrowth()
{
    const std::lock_guard lock(growthMutex);
    if (!thresholdSet) {
        mallopt(M_MMAP_THRESHOLD, kMmapThreshold);
        thresholdSet = true;
    }
    if (growthUsers++ == 0)
        mallopt(M_TOP_PAD, kHeapSize);
}

WholeHeapGrowth::~WholeHeapGrowth()
{
    const std::lock_guard lock(growthMutex);
    if (--growthUsers == 0)
        mallopt(M_TOP_PAD, kDefaultTopPad);
}
// NOLINTEND(concurrency-mt-unsafe)

void useHugePageHeap(char** argv)
{
    if (const char* saved = std::getenv(kSaved)) { // the re-executed process
        restoreTunables(saved);
        return;
    }
    const char* off = std::getenv("LOCKSCOPE_HUGE_HEAP");
    if ((off && std::strcmp(off, "off") == 0) || !hugePagesOnRequestOnly())
        return;
    const char* before = std::getenv(kTunables);
    if (before && std::strstr(before, "glibc.malloc.hugetlb"))
        return; // the user chose
    const std::string saved = before ? std::string("=") + before : std::string("-");
    const std::string tunables = before && *before ? std::string(before) + ":" + kHugeTlb : std::string(kHugeTlb);
    setenv(kSaved, saved.c_str(), 1);
    setenv(kTunables, tunables.c_str(), 1);
    execv("/proc/self/exe", argv);
    restoreTunables(saved.c_str()); // no exec: carry on with small pages
}

} // namespace lockscope
