// SPDX-License-Identifier: GPL-2.0-or-later
// The stack budget's walked waits are a fair sample of each lock's call
// paths: one mutex (a shared file descriptor's f_pos_lock) taken from two
// syscalls in a known 3:1 proportion (read() three times, readv() once, the
// same one-byte work) is recorded under the default budget and with every
// stack walked; the readv() path's share of the lock's waits, with the
// unwalked waits shared out (site_shares.h), agrees between the two.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <unistd.h>

#include "lockscope/capture/io.h"
#include "lockscope/capture/site_shares.h"
#include "run_process.h"

using namespace record_test;
using lockscope::Capture;

namespace {

const std::string kBin = LOCKSCOPE_BIN;

// Both recordings' shares agree within this many points of the lock's waits:
// the walked sample's own 95% interval (about 1.7 points at the default
// budget on this workload), plus the two runs' real difference in contention
// mix: walking every stack slows the deeper readv() path, which moved its
// share by 4-6 points (0.24 sampled, 0.20 every stack walked, and once 0.26
// against 0.20). A biased draw is far outside it: a counter in step with the
// workload's read, read, read, readv loop walks one call site only (share 0 or 1).
constexpr double kShareBound = 0.08;

struct PathShare {
    uint64_t waits = 0;        // the lock's waits
    uint64_t readvWaits = 0;   // on paths through readv(), shares included
    uint64_t pathWaits = 0;    // on all paths, shares included
    lockscope::WalkedShare walked;
    bool notSampledLeft = false; // a [stack not sampled] site kept waits
    double share() const { return waits ? double(readvWaits) / double(waits) : 0.0; }
};

bool throughReadv(const lockscope::Stack* s)
{
    if (!s)
        return false;
    for (const auto& f : s->frames)
        if (f.function.str().find("readv") != std::string::npos)
            return true;
    return false;
}

// The lock with the most waits on a readv() path: the file's f_pos_lock.
PathShare readvShare(const Capture& c)
{
    const lockscope::StackIndex index(c);
    PathShare best;
    for (const auto& lock : c.locks) {
        const lockscope::LockShares shares = lockscope::shareOutUnsampled(lock, index);
        PathShare p;
        p.waits = lock.wait.count();
        p.walked = shares.waits;
        for (const auto& site : shares.sites) {
            const lockscope::Stack* s = index.find(site.stack_id);
            p.pathWaits += site.waits;
            if (lockscope::isNotSampledStack(s))
                p.notSampledLeft = p.notSampledLeft || site.waits > 0;
            else if (throughReadv(s))
                p.readvWaits += site.waits;
        }
        if (p.readvWaits > best.readvWaits)
            best = p;
    }
    return best;
}

Capture recordFilepos(const std::string& dir, const std::string& tag, std::vector<std::string> budget)
{
    const std::string out = dir + "/" + tag + ".lockscope.json";
    std::vector<std::string> argv{kBin, "record", "--no-cpu", "--no-hold", "--no-syscalls", "-o", out};
    argv.insert(argv.end(), budget.begin(), budget.end());
    // Its own session at nice -10, as the semop tests do, so that its threads
    // run at once on this shared machine and the lock is contended.
    for (const char* a : {"--", "setsid", "-w", "sh", "-c", "echo -10 > /proc/self/autogroup; exec \"$0\" \"$@\"",
                          CONTEND_BIN, "filepos-3to1", "4", "2"})
        argv.emplace_back(a);
    const Exit e = run(argv, dir, tag);
    if (e.code != 0)
        throw std::runtime_error(tag + ": record exited " + std::to_string(e.code) + ": " + e.err);
    return lockscope::readCapture(out);
}

} // namespace

TEST(PathShares, StackBudgetSharesAgreeWithEveryStackWalked)
{
    if (geteuid() != 0)
        GTEST_SKIP() << "skipped: loading BPF programs needs root (CI runs these as root)";
    const std::string dir = tempDir();
    // Both runs time every wait (an untimed wait is never walked), so they
    // differ in the stack budget alone.
    const Capture sampled = recordFilepos(dir, "default-budget", {"--timing-budget", "0"});
    const Capture all = recordFilepos(dir, "every-stack", {"--stack-budget", "0", "--timing-budget", "0"});
    const PathShare s = readvShare(sampled), a = readvShare(all);
    if (s.waits < 4000 || a.waits < 4000)
        GTEST_SKIP() << "skipped: f_pos_lock contended too little for the budget to bind (" << s.waits << " and "
                     << a.waits << " waits; machine loaded?)";

    // The default budget really sampled this lock, and every stack was walked with none.
    ASSERT_TRUE(s.walked.sampled()) << "walked " << s.walked.walked << " of " << s.walked.all;
    EXPECT_LT(s.walked.walked * 4, s.walked.all) << "the budget walked most waits: nothing to share out";
    EXPECT_FALSE(a.walked.sampled()) << "--stack-budget 0 left " << (a.walked.all - a.walked.walked) << " unwalked";

    // Shared out, the paths hold the lock's exact waits and no pseudo path.
    EXPECT_EQ(s.pathWaits, s.waits);
    EXPECT_EQ(s.walked.all, s.waits);
    EXPECT_FALSE(s.notSampledLeft);

    // The known proportion: one readv() in four calls (the same work, so near a quarter of the waits).
    EXPECT_GT(a.share(), 0.10) << "every stack walked";
    EXPECT_LT(a.share(), 0.40) << "every stack walked";
    EXPECT_NEAR(s.share(), a.share(), kShareBound)
        << "readv path: " << s.readvWaits << " of " << s.waits << " waits under the default budget (from "
        << s.walked.walked << " walked, ±" << 100 * s.walked.shareUncertainty() << " points), " << a.readvWaits
        << " of " << a.waits << " with every stack walked";
    std::printf("readv share: default budget %.4f (walked %llu of %llu, ±%.2f points), every stack %.4f (%llu waits)\n",
                s.share(), static_cast<unsigned long long>(s.walked.walked),
                static_cast<unsigned long long>(s.walked.all), 100 * s.walked.shareUncertainty(), a.share(),
                static_cast<unsigned long long>(a.waits));
}
