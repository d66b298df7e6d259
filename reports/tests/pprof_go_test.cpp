// SPDX-License-Identifier: GPL-2.0-or-later
// The pprof exports read by their real consumer, `go tool pprof` (Debian
// package golang-go): the totals -top prints are the capture's, and the
// holder-side profile's -traces show each owner task with its stack, as
// for a Go mutex profile.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <sstream>

#include "lockscope/capture/io.h"
#include "lockscope/capture/site_shares.h"
#include "lockscope/reports/exchange.h"
#include "test_support.h"

using namespace lockscope;
using namespace lockscope::reports;

namespace {
std::string goTool()
{
    for (const char* p : {"/usr/bin/go", "/usr/lib/go/bin/go"})
        if (std::filesystem::exists(p))
            return p;
    return "";
}

// `lockscope export` of a fixture to the artifacts directory.
std::string exportFixture(const std::string& fixture, const std::string& format)
{
    const std::string out = test::artifactDir() + "/" + fixture + "." + format + ".pb.gz";
    std::string log;
    const int rc = test::run(std::string(LOCKSCOPE_CLI) + " export '" + test::fixture(fixture) + "' --format " +
                                 format + " -o '" + out + "'",
                             &log);
    EXPECT_EQ(rc, 0) << log;
    return out;
}

std::string pprof(const std::string& args, const std::string& file)
{
    std::string out;
    // "Main binary filename not available." on stderr: the profile has no mappings, as intended.
    const int rc = test::run(goTool() + " tool pprof " + args + " '" + file + "' 2>/dev/null", &out);
    EXPECT_EQ(rc, 0) << out;
    return out;
}

std::string totalLine(uint64_t v, const char* unit)
{
    return "of " + std::to_string(v) + unit + " total";
}

// -traces output: one block per sample, between lines of dashes.
std::vector<std::string> traces(const std::string& text)
{
    std::vector<std::string> blocks;
    std::istringstream in(text);
    std::string block;
    bool started = false;
    for (std::string line; std::getline(in, line);) {
        if (line.rfind("-----------+", 0) == 0) {
            if (started && !block.empty())
                blocks.push_back(block);
            started = true;
            block.clear();
        } else if (started) {
            block += line + "\n";
        }
    }
    return blocks;
}
} // namespace

TEST(PprofGo, TopTotalsAreTheCapturesWaitHoldAndCount)
{
    if (goTool().empty())
        GTEST_SKIP() << "no go tool found (Debian package: golang-go)";
    const Capture c = readCapture(test::fixture("baseline.lockscope.json"));
    uint64_t wait = 0, hold = 0, count = 0;
    for (const auto& l : c.locks)
        for (const auto& s : l.sites) {
            wait += s.wait.total();
            hold += s.hold.total();
            count += s.wait.count() ? s.wait.count() : s.hold.count();
        }
    const std::string file = exportFixture("baseline.lockscope.json", "pprof");
    std::string top = pprof("-top -unit=ns", file);
    EXPECT_NE(top.find("Type: delay"), std::string::npos) << top;
    EXPECT_NE(top.find(totalLine(wait, "ns")), std::string::npos) << top;
    top = pprof("-top -unit=ns -sample_index=hold", file);
    EXPECT_NE(top.find(totalLine(hold, "ns")), std::string::npos) << top;
    top = pprof("-top -sample_index=contentions", file);
    EXPECT_NE(top.find(totalLine(count, "")), std::string::npos) << top;
}

// The committed seed pair's patched side: a real capture under the stack
// budget (26,632 waits and holds not walked) recorded with fentry/fexit
// programs attached, whose trampolines sat in its stacks. The unwalked
// events are shared out over the walked paths, so -top's totals stay the
// capture's while its top rows are kernel functions, not the sampler's
// pseudo frame nor a BPF address.
TEST(PprofGo, SampledCaptureShowsRealFramesOnTopWithExactTotals)
{
    if (goTool().empty())
        GTEST_SKIP() << "no go tool found (Debian package: golang-go)";
    const std::string capture = std::string(LOCKSCOPE_SAMPLE_CAPTURES) + "/seed04-patched.lockscope.json";
    const Capture c = readCapture(capture);
    ASSERT_GT(c.stats.stacks_unsampled, 0u) << "the fixture must be a sampled capture";
    uint64_t wait = 0, hold = 0, unwalkedHold = 0;
    for (const auto& l : c.locks)
        for (const auto& s : l.sites) {
            wait += s.wait.total();
            hold += s.hold.total();
            if (isNotSampledStack(c.findStack(s.stack_id)))
                unwalkedHold += s.hold.total();
        }
    ASSERT_GT(unwalkedHold, 0u) << "its holds were sampled";
    const std::string file = test::artifactDir() + "/seed04-patched.pprof.pb.gz";
    std::string log;
    ASSERT_EQ(test::run(std::string(LOCKSCOPE_CLI) + " export '" + capture + "' --format pprof -o '" + file + "'", &log),
              0)
        << log;
    const std::string holds = pprof("-top -unit=ns -sample_index=hold", file);
    EXPECT_NE(holds.find(totalLine(hold, "ns")), std::string::npos) << holds;
    // Holds: its hold-only locks had none walked, so their holds keep the pseudo frame (said so in the report).
    const std::string top = pprof("-top -unit=ns -sample_index=delay", file);
    EXPECT_NE(top.find(totalLine(wait, "ns")), std::string::npos) << top;
    EXPECT_EQ(top.find("[stack not sampled]"), std::string::npos) << top;
    EXPECT_EQ(top.find("0xffffffffa"), std::string::npos) << "a BPF trampoline address:\n" << top;
    // The first row after the header names a kernel function.
    const size_t header = top.find("flat%");
    ASSERT_NE(header, std::string::npos) << top;
    const size_t first = top.find('\n', header) + 1;
    const std::string row = top.substr(first, top.find('\n', first) - first);
    EXPECT_TRUE(row.find("[") == std::string::npos && row.find(" 0x") == std::string::npos) << row;
}

// The owners fixture: owner-workload's pipe mutex and memfd i_rwsem, each
// held by its own "ls-owner" thread asleep in handle_userfault.
TEST(PprofGo, HoldersProfileChargesTheWaitToEachOwnersStack)
{
    if (goTool().empty())
        GTEST_SKIP() << "no go tool found (Debian package: golang-go)";
    const Capture c = readCapture(test::fixture("owners.lockscope.json"));
    const StackIndex index(c);
    const std::string file = exportFixture("owners.lockscope.json", "pprof-holders");
    uint64_t wait = 0, count = 0, owners = 0;
    const std::vector<std::string> blocks = traces(pprof("-traces", file));
    for (const auto& l : c.locks)
        for (const auto& s : l.sites)
            for (const auto& h : s.holders) {
                wait += h.wait_ns;
                count += h.count;
                ASSERT_TRUE(h.owner_tid) << "a --lock-owner capture";
                ++owners;
                // The owner's block: its lock and task as labels, then its stack, innermost first.
                const std::string tid = " owner_tid:  " + std::to_string(*h.owner_tid) + "\n";
                const auto b = std::find_if(blocks.begin(), blocks.end(),
                                            [&](const std::string& x) { return x.find(tid) != std::string::npos; });
                ASSERT_NE(b, blocks.end()) << tid;
                EXPECT_NE(b->find("lock:  " + l.key + "\n"), std::string::npos) << *b;
                EXPECT_NE(b->find("owner_comm:  " + h.owner_comm + "\n"), std::string::npos) << *b;
                const Stack* stack = index.find(h.stack_id);
                ASSERT_TRUE(stack && !stack->frames.empty());
                size_t at = 0;
                for (const auto& f : stack->frames) {
                    at = b->find(" " + f.function.str() + "\n", at);
                    ASSERT_NE(at, std::string::npos) << f.function << " in order in\n" << *b;
                }
            }
    EXPECT_EQ(owners, blocks.size());
    EXPECT_GE(owners, 2u);
    const std::string top = pprof("-top -unit=ns", file);
    EXPECT_NE(top.find(totalLine(wait, "ns")), std::string::npos) << top;
    EXPECT_NE(top.find("100%  handle_userfault\n"), std::string::npos) << "where both owners slept:\n" << top;
    EXPECT_NE(pprof("-top -sample_index=contentions", file).find(totalLine(count, "")), std::string::npos);
}

// Names that are not UTF-8 load, shown with U+FFFD (pprof_test.cpp checks the bytes).
TEST(PprofGo, NamesThatAreNotUtf8Load)
{
    if (goTool().empty())
        GTEST_SKIP() << "no go tool found (Debian package: golang-go)";
    const Capture c = test::notUtf8Capture();
    for (const char* format : {"pprof", "pprof-holders"}) {
        const std::string file = test::artifactDir() + "/not-utf8." + format + ".pb.gz";
        test::writeFile(file, findExporter(format)->write(c, {}));
        const std::string traced = pprof("-traces", file);
        EXPECT_NE(traced.find(std::string(format) == "pprof" ? " caller\xef\xbf\xbd\n" : " holder\xef\xbf\xbd"),
                  std::string::npos)
            << format << ":\n" << traced;
        EXPECT_NE(traced.find("lock:  spinlock@caller\xef\xbf\xbd\n"), std::string::npos) << traced;
    }
}

TEST(PprofGo, HoldersExportOfACaptureWithoutHoldersIsOneLineAndAnError)
{
    const std::string out = test::artifactDir() + "/no-holders.pb.gz";
    std::filesystem::remove(out);
    std::string log;
    const int rc = test::run(std::string(LOCKSCOPE_CLI) + " export '" + test::fixture("baseline.lockscope.json") +
                                 "' --format pprof-holders -o '" + out + "'",
                             &log);
    EXPECT_NE(rc, 0);
    EXPECT_EQ(std::count(log.begin(), log.end(), '\n'), 1) << log;
    EXPECT_NE(log.find("names no lock holders: record with --lock-owner"), std::string::npos) << log;
    EXPECT_FALSE(std::filesystem::exists(out));
}
