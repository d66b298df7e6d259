// SPDX-License-Identifier: GPL-2.0-or-later
#include <gtest/gtest.h>

#include <algorithm>
#include <unistd.h>

#include "lockscope/capture/io.h"
#include "lockscope/reports/compare.h"
#include "lockscope/reports/exchange.h"
#include "test_support.h"

using namespace lockscope;
using namespace lockscope::reports;

namespace {
const Lock& lockOf(const Capture& c, const std::string& key)
{
    auto it = std::find_if(c.locks.begin(), c.locks.end(), [&](const Lock& l) { return l.key == key; });
    if (it == c.locks.end())
        throw std::runtime_error("no lock " + key);
    return *it;
}

// Imported captures must pass the same validation as recorded ones.
Capture roundTrip(const Capture& c) { return fromJson(toJson(c)); }

const char* kPerfScript = R"(# ========
# hostname : lab
# os release : 6.18.0-test
# nrcpus online : 4
# ========
#
stress-ng-sem 1201 [001]   100.000100: lock:contention_begin: 0xffff888100001000 (flags=SPIN)
	ffffffff82203efe queued_spin_lock_slowpath+0x10e ([kernel.kallsyms])
	ffffffff8220389b _raw_spin_lock+0x3b ([kernel.kallsyms])
	ffffffff81512a3e sem_lock+0x9a ([kernel.kallsyms])
	ffffffff81512b00 do_semtimedop+0x2be ([kernel.kallsyms])

stress-ng-sem 1202 [000]   100.000150: lock:contention_begin: 0xffff888100001000 (flags=SPIN)
	ffffffff82203efe queued_spin_lock_slowpath+0x10e ([kernel.kallsyms])
	ffffffff8220389b _raw_spin_lock+0x3b ([kernel.kallsyms])
	ffffffff81512a3e sem_lock+0x9a ([kernel.kallsyms])
	ffffffff81512b00 do_semtimedop+0x2be ([kernel.kallsyms])

stress-ng-sem 1201 [001]   100.000300:   lock:contention_end: 0xffff888100001000 (ret=0)
	ffffffff82203f4b queued_spin_lock_slowpath+0x15b ([kernel.kallsyms])

stress-ng-sem 1202 [000]   100.000900:   lock:contention_end: 0xffff888100001000 (ret=0)
	ffffffff82203f4b queued_spin_lock_slowpath+0x15b ([kernel.kallsyms])

kworker/0:1 my 77 [000]   100.001000: lock:contention_begin: 0xffff888100002000 (flags=MUTEX)
	ffffffff81300000 __mutex_lock+0x50 ([kernel.kallsyms])
	ffffffff81300100 process_one_work+0x20 ([kernel.kallsyms])

kworker/0:1 my 77 [000]   100.003000:   lock:contention_end: 0xffff888100002000 (ret=-4)

kworker/0:1 my 77 [000]   100.004000:   lock:contention_end: 0xffff888100003000 (ret=0)
)";
} // namespace

TEST(ImportPerfScript, PairsBeginAndEndPerThreadAndLock)
{
    const Capture c = roundTrip(findImporter("perf-script")->read(kPerfScript, "t.txt"));
    EXPECT_EQ(c.meta.kernel_release, "6.18.0-test");
    EXPECT_EQ(c.meta.cpu_count, 4u);
    const Lock& sem = lockOf(c, "spinlock@sem_lock");
    EXPECT_EQ(sem.type, "spinlock");
    EXPECT_EQ(sem.wait.count(), 2u);
    EXPECT_EQ(sem.wait.total(), 200'000u + 750'000u);  // 200 us (tid 1201) + 750 us (tid 1202)
    EXPECT_EQ(sem.wait.max(), 750'000u);
    ASSERT_TRUE(sem.address);
    EXPECT_EQ(*sem.address, 0xffff888100001000u);
    ASSERT_EQ(sem.sites.size(), 1u);
    const Lock& mutex = lockOf(c, "mutex@process_one_work");
    EXPECT_EQ(mutex.aborted, 1u) << "ret=-4 is an aborted wait";
    EXPECT_EQ(mutex.wait.count(), 0u);
    EXPECT_EQ(c.stats.unmatched, 1u) << "the end without a begin";
    EXPECT_EQ(c.stats.aborted_waits, 1u);
    EXPECT_EQ(c.stats.events, 7u);
}

// Keys as record gives them (callerLockKey), so an imported perf capture and
// a lockscope one of the same kernel compare lock by lock: a compiler clone by
// its base name, an unnamed caller by its address.
TEST(ImportPerfScript, KeysLocksAsRecordDoes)
{
    const char* script = R"(sem 1 [001]   1.000100: lock:contention_begin: 0xffff888100001000 (flags=SPIN)
	ffffffff8220389b _raw_spin_lock+0x3b ([kernel.kallsyms])
	ffffffff81512a3e sem_lock.constprop.0+0x9a ([kernel.kallsyms])
	ffffffff81512b00 do_semtimedop+0x2be ([kernel.kallsyms])

sem 1 [001]   1.000300:   lock:contention_end: 0xffff888100001000 (ret=0)

kw 2 [000]   1.001000: lock:contention_begin: 0xffff888100002000 (flags=MUTEX)
	ffffffff81300000 __mutex_lock.constprop.0+0x50 ([kernel.kallsyms])
	ffffffffc0401045 [unknown] ([unknown])
	ffffffff81300100 process_one_work+0x20 ([kernel.kallsyms])

kw 2 [000]   1.003000:   lock:contention_end: 0xffff888100002000 (ret=0)
)";
    const Capture c = roundTrip(findImporter("perf-script")->read(script, "t.txt"));
    EXPECT_EQ(lockOf(c, "spinlock@sem_lock").wait.count(), 1u);
    EXPECT_EQ(lockOf(c, "mutex@0xffffffffc0401045").wait.count(), 1u);
}

TEST(ImportPerfScript, BadInputIsOneLine)
{
    const Importer* i = findImporter("perf-script");
    try {
        i->read("hello world\n", "x.txt");
        FAIL() << "no error";
    } catch (const ImportError& e) {
        const std::string m = e.what();
        EXPECT_EQ(m.find('\n'), std::string::npos);
        EXPECT_EQ(m.rfind("x.txt:1: ", 0), 0u) << m;
    }
    EXPECT_THROW(i->read("", "empty.txt"), ImportError);
    EXPECT_THROW(i->read("a 1 [0] 1.0: lock:contention_begin: zz (flags=SPIN)\n", "h.txt"), ImportError);
}

// The workload contends one mutex on every kernel with the lock tracepoints:
// four dd readers share one open file (inherited fd 3), so each read() takes
// its f_pos_lock (fdget_pos) while the others hold it. perf bench sched
// messaging contends spinlocks mostly, which a guest without paravirt
// spinlocks does not report.
TEST(ImportPerfScript, RealPerfLockRecord)
{
    if (::geteuid() != 0)
        GTEST_SKIP() << "needs root for perf lock record (lock:contention tracepoints)";
    std::string out;
    if (test::run("command -v perf", &out) != 0)
        GTEST_SKIP() << "perf is not installed (Debian: linux-perf)";
    if (::sysconf(_SC_NPROCESSORS_ONLN) < 2)
        GTEST_SKIP() << "needs two CPUs for the readers to meet on the file's lock";
    const std::string dir = test::artifactDir();
    test::writeFile(dir + "/perf-lock.input", std::string(size_t{64} << 10, 'x'));
    out.clear();
    const int rc = test::run("cd '" + dir + "' && timeout 120 perf lock record -g -o perf-lock.data -- sh -c "
                             "'exec 3<perf-lock.input; for i in 1 2 3 4; do "
                             "dd bs=1 count=5000 <&3 of=/dev/null status=none & done; wait'",
                             &out);
    if (rc != 0)
        GTEST_SKIP() << "perf lock record failed here (rc " << rc << "): " << out.substr(0, 300);
    out.clear();
    ASSERT_EQ(test::run("cd '" + dir + "' && perf script --header -i perf-lock.data > perf-lock.txt", &out), 0) << out;
    const std::string text = test::readFile(dir + "/perf-lock.txt");
    const Capture c = roundTrip(findImporter("perf-script")->read(text, "perf-lock.txt"));
    EXPECT_FALSE(c.meta.kernel_release.empty());
    uint64_t waits = 0, filePosWaits = 0;
    for (const auto& l : c.locks) {
        waits += l.wait.count();
        EXPECT_NE(l.key.find('@'), std::string::npos) << l.key;
        if (l.key.rfind("mutex@", 0) == 0 && l.key.find("fdget_pos") != std::string::npos)
            filePosWaits += l.wait.count();
        for (const auto& s : l.sites)
            EXPECT_NE(c.findStack(s.stack_id), nullptr);
    }
    // Named as record names it: the mutex by its caller (fdget_pos; __fdget_pos in older kernels).
    EXPECT_GT(filePosWaits, 0u) << "no mutex@*fdget_pos wait among " << c.locks.size() << " locks";
    EXPECT_GE(filePosWaits * 2, waits) << "the readers' lock is most of the waits";
    // Begins are events too, so pairs are at most half of them.
    EXPECT_LE(waits * 2, c.stats.events);
    writeCapture(c, dir + "/perf-lock.lockscope.json", true);
}

TEST(ImportLockStat, ParsesClassesPointsAndUnits)
{
    const Capture c =
        roundTrip(findImporter("lock-stat")->read(test::readFile(test::testdata("fixtures/lock_stat.txt")), "ls"));
    const Lock& sem = lockOf(c, "&sma->sem_perm.lock");
    EXPECT_EQ(sem.wait.count(), 802400u);
    EXPECT_EQ(sem.wait.total(), 13'390'000'000u);  // us → ns
    EXPECT_EQ(sem.wait.min(), 260u);
    EXPECT_EQ(sem.wait.max(), 246'290u);
    EXPECT_EQ(sem.hold.count(), 4'210'000u);
    ASSERT_EQ(sem.sites.size(), 3u);
    uint64_t siteCount = 0;
    for (const auto& s : sem.sites)
        siteCount += s.wait.count();
    EXPECT_EQ(siteCount, 612000u + 188000u + 2400u);
    const Stack* top = c.findStack(sem.sites[0].stack_id);
    ASSERT_NE(top, nullptr);
    EXPECT_EQ(top->frames[0].function, "do_semtimedop");
    EXPECT_EQ(top->frames[0].offset, 0x2beu);
    EXPECT_EQ(lockOf(c, "&mm->mmap_sem-W").type, "lockdep-class:W");
    EXPECT_EQ(lockOf(c, "&mm->mmap_sem-R").wait.count(), 100u);
    EXPECT_EQ(lockOf(c, "&rq->lock").wait.count(), 1587u);
    EXPECT_EQ(lockOf(c, "unix_table_lock/holders").sites.size(), 4u) << "contending points kept";
}

TEST(ImportLockStat, ImportedCapturesCompare)
{
    const std::string text = test::readFile(test::testdata("fixtures/lock_stat.txt"));
    std::string patched = text;
    // The patched kernel: sem_perm.lock contended 10x less.
    const std::string from = "80412         802400           0.26         246.29    13390000.00          16.68";
    const std::string to = " 8041          80240           0.26         246.29     1339000.00          16.68";
    ASSERT_NE(patched.find(from), std::string::npos);
    patched.replace(patched.find(from), from.size(), to);
    const Importer* i = findImporter("lock-stat");
    const Comparison cmp = compare(i->read(text, "a"), i->read(patched, "b"));
    EXPECT_EQ(cmp.locks[0].key, "&sma->sem_perm.lock");
    EXPECT_TRUE(cmp.locks[0].wait_test.significant);
    ASSERT_TRUE(cmp.locks[0].total_wait_ns.pct());
    EXPECT_NEAR(*cmp.locks[0].total_wait_ns.pct(), -90.0, 0.1);
    EXPECT_EQ(cmp.locks[0].judgement.verdict, Verdict::NoVerdict) << "one run a side";
}

TEST(ImportLockStat, BadInputIsOneLine)
{
    const Importer* i = findImporter("lock-stat");
    EXPECT_THROW(i->read("", "e"), ImportError);
    try {
        i->read("lock_stat version 0.4\n  foo: 1 2 3\n", "ls.txt");
        FAIL() << "no error";
    } catch (const ImportError& e) {
        EXPECT_STREQ(e.what(), "ls.txt:2: expected 12 numbers after the class name, got 3; expected "
                               "/proc/lock_stat text (lock_stat version 0.4)");
    }
}

// NaN, infinities and negative numbers are refused with one line naming the
// value; std::stoull would have wrapped "-1" to 2^64-1 and std::stod read "nan".
TEST(ImportLockStat, RefusesNanInfAndNegativeValues)
{
    const Importer* i = findImporter("lock-stat");
    const std::string head = "lock_stat version 0.4\n";
    const std::string good = "  l: 1 2 0.10 0.20 0.30 0.15 1 4 0.10 0.20 0.50 0.12\n";
    EXPECT_NO_THROW(i->read(head + good, "ok.txt"));
    for (const char* bad : {"nan", "inf", "-0.5", "-1", "1e400", "0x10"}) {
        std::string line = good;
        line.replace(line.find("0.20"), 4, bad); // waittime-max
        try {
            i->read(head + line, "ls.txt");
            ADD_FAILURE() << bad << " accepted";
        } catch (const ImportError& e) {
            const std::string what = e.what();
            EXPECT_EQ(what.rfind("ls.txt:2: bad number in class line", 0), 0u) << what;
            EXPECT_NE(what.find(bad), std::string::npos) << what;
            EXPECT_EQ(what.find('\n'), std::string::npos) << what;
        }
    }
    std::string negCount = good;
    negCount.replace(negCount.find(" 2 "), 3, " -2 "); // contentions
    EXPECT_THROW(i->read(head + negCount, "ls.txt"), ImportError);
    EXPECT_THROW(i->read(head + good + "  -------\n  l  -5  [<ffffffff81000000>] f+0x1/0x2\n", "ls.txt"),
                 ImportError)
        << "negative contention point count";
}

TEST(ImportPerfScript, RefusesNanInfAndNegativeValues)
{
    const Importer* i = findImporter("perf-script");
    const std::string end = "\na 1 [0] 1.5: lock:contention_end: 0x10 (ret=0)\n";
    EXPECT_NO_THROW(i->read("a 1 [0] 1.0: lock:contention_begin: 0x10 (flags=SPIN)" + end, "ok.txt"));
    for (const char* ts : {"nan", "inf", "-1.0", "1e400"}) {
        try {
            i->read(std::string("a 1 [0] ") + ts + ": lock:contention_begin: 0x10 (flags=SPIN)" + end, "p.txt");
            ADD_FAILURE() << ts << " accepted";
        } catch (const ImportError& e) {
            const std::string what = e.what();
            EXPECT_EQ(what.rfind("p.txt:1: cannot parse the event header", 0), 0u) << what;
            EXPECT_NE(what.find(ts), std::string::npos) << what;
        }
    }
    EXPECT_THROW(i->read("a -1 [0] 1.0: lock:contention_begin: 0x10 (flags=SPIN)" + end, "p.txt"), ImportError)
        << "negative tid";
    EXPECT_THROW(i->read("a 1 [0] 1.0: lock:contention_begin: -0x10 (flags=SPIN)" + end, "p.txt"), ImportError)
        << "negative lock address";
    EXPECT_THROW(i->read("# nrcpus online : -4\na 1 [0] 1.0: lock:contention_begin: 0x10 (flags=SPIN)" + end, "p.txt"),
                 ImportError);
}

// What an importer returns is what the capture reader accepts: a capture the
// capture layer would refuse is an import error, not a file written for later.
TEST(ImportLockStat, ValidatesTheCaptureItBuilds)
{
    const Importer* i = findImporter("lock-stat");
    // Found by import_lock_stat_fuzz: a class name that is not UTF-8 cannot be written as JSON.
    try {
        i->read("lock_stat version 0.4\nl\xff: 1 2 0.10 0.20 0.30 0.15 1 4 0.10 0.20 0.50 0.12\n", "ls.txt");
        FAIL() << "no error";
    } catch (const ImportError& e) {
        const std::string what = e.what();
        EXPECT_EQ(what.rfind("ls.txt: the imported figures do not make a valid capture: ", 0), 0u) << what;
        EXPECT_NE(what.find("UTF-8"), std::string::npos) << what;
    }
    // A class line with an empty class name parses, but a lock key must not be empty.
    try {
        i->read("lock_stat version 0.4\n: 1 2 0.10 0.20 0.30 0.15 1 4 0.10 0.20 0.50 0.12\n", "ls.txt");
        FAIL() << "no error";
    } catch (const ImportError& e) {
        const std::string what = e.what();
        EXPECT_EQ(what.rfind("ls.txt: the imported figures do not make a valid capture: ", 0), 0u) << what;
        EXPECT_NE(what.find("key"), std::string::npos) << what;
    }
}
