// SPDX-License-Identifier: GPL-2.0-or-later
#include <cstdio>
#include <fstream>
#include <map>
#include <sstream>
#include <string>

#include <gtest/gtest.h>

namespace {

std::map<std::string, std::string> runProbe(const std::string& env)
{
    const std::string cmd = "env -u GLIBC_TUNABLES -u LOCKSCOPE_HUGE_HEAP " + env + " " + LOCKSCOPE_HUGE_PAGE_PROBE;
    FILE* p = popen(cmd.c_str(), "r");
    EXPECT_NE(p, nullptr);
    std::map<std::string, std::string> out;
    char line[512];
    while (p && fgets(line, sizeof line, p)) {
        std::string s(line);
        if (!s.empty() && s.back() == '\n')
            s.pop_back();
        const size_t eq = s.find('=');
        if (eq != std::string::npos)
            out[s.substr(0, eq)] = s.substr(eq + 1);
    }
    if (p) {
        EXPECT_EQ(pclose(p), 0);
    }
    return out;
}

std::string thpMode()
{
    std::ifstream in("/sys/kernel/mm/transparent_hugepage/enabled");
    std::string line;
    std::getline(in, line);
    return line;
}

bool hugePagesOnRequest() { return thpMode().find("[madvise]") != std::string::npos; }

// Under AddressSanitizer the heap is the sanitizer's, not glibc's: the
// tunable reaches nothing.
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
constexpr bool kSanitizerHeap = true;
#else
constexpr bool kSanitizerHeap = false;
#endif

} // namespace

// glibc takes the tunable at start-up only, so huge pages under the heap
// show that the program was executed again with it.
TEST(HugePageHeap, ReexecutesWithHugePagesAndHidesTheTunableFromChildren)
{
    if (!hugePagesOnRequest())
        GTEST_SKIP() << "transparent huge pages are not 'madvise' here (" << thpMode()
                     << "): no re-exec is wanted, checked by NothingHappensWhereNotWanted";
    if (kSanitizerHeap)
        GTEST_SKIP() << "built with a sanitizer, whose allocator ignores glibc's malloc tunables";
    auto out = runProbe("");
    EXPECT_GT(std::stol(out["anon_huge_kb"]), 0) << "64 MiB of heap and no huge page";
    // Most of a thread's 64 MiB under a WholeHeapGrowth, and given back when
    // freed after it (a pad left at a heap's size would keep it).
    EXPECT_GT(std::stol(out["thread_anon_huge_kb"]), 32 * 1024) << "a thread's arena kept to small pages";
    EXPECT_LT(std::stol(out["kept_after_free_kb"]), 16 * 1024) << "the thread's freed heap was kept";
    EXPECT_EQ(out["now_env"], "(unset)");

    out = runProbe("GLIBC_TUNABLES=glibc.malloc.arena_max=2");
    EXPECT_GT(std::stol(out["anon_huge_kb"]), 0);
    EXPECT_EQ(out["now_env"], "glibc.malloc.arena_max=2");
}

TEST(HugePageHeap, NothingHappensWhereNotWanted)
{
    auto out = runProbe("LOCKSCOPE_HUGE_HEAP=off");
    EXPECT_EQ(out["now_env"], "(unset)");
    if (hugePagesOnRequest()) {
        EXPECT_EQ(out["anon_huge_kb"], "0") << "huge pages though LOCKSCOPE_HUGE_HEAP=off";
    }
    // The user's own choice of the tunable is left alone.
    out = runProbe("GLIBC_TUNABLES=glibc.malloc.hugetlb=0");
    EXPECT_EQ(out["now_env"], "glibc.malloc.hugetlb=0");
    if (hugePagesOnRequest()) {
        EXPECT_EQ(out["anon_huge_kb"], "0");
    }
}
