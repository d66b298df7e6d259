// SPDX-License-Identifier: GPL-2.0-or-later
#include <gtest/gtest.h>

#include <fstream>
#include <string>

#include "kallsyms_text.h"
#include "lockscope/record/kallsyms.h"

using lockscope::record::KernelSymbols;
using lockscope::record::SymbolError;

namespace {

const char* kSynthetic = "ffffffff81000000 T _stext\n"
                         "ffffffff81000000 t _text_local\n"
                         "ffffffff81001000 T do_semtimedop\n"
                         "ffffffff81001800 t sem_lock\n"
                         "ffffffff81002000 T _raw_spin_lock\n"
                         "ffffffff82000000 D rename_lock\n"
                         "ffffffff82000040 d some_table\n"
                         "ffffffff82000100 B tasklist_lock\n"
                         "ffffffffc0001000 t ext4_lookup\t[ext4]\n"
                         "ffffffffc0001200 t ext4_readdir\t[ext4]\n"
                         "0000000000000000 A fixed_percpu_data\n";

} // namespace

TEST(Kallsyms, ResolvesFunctionsWithOffsetAndModule)
{
    auto ks = KernelSymbols::parse(kSynthetic);
    auto r = ks.resolveText(0xffffffff81001010);
    ASSERT_TRUE(r);
    EXPECT_EQ(r->name, "do_semtimedop");
    EXPECT_EQ(r->offset, 0x10u);
    EXPECT_EQ(r->module, "");

    r = ks.resolveText(0xffffffff81001800);
    ASSERT_TRUE(r);
    EXPECT_EQ(r->name, "sem_lock");
    EXPECT_EQ(r->offset, 0u);

    r = ks.resolveText(0xffffffffc0001234);
    ASSERT_TRUE(r);
    EXPECT_EQ(r->name, "ext4_readdir");
    EXPECT_EQ(r->offset, 0x34u);
    EXPECT_EQ(r->module, "ext4");
}

TEST(Kallsyms, AliasPrefersGlobalName)
{
    auto ks = KernelSymbols::parse(kSynthetic);
    auto r = ks.resolveText(0xffffffff81000004);
    ASSERT_TRUE(r);
    EXPECT_EQ(r->name, "_stext");
}

// A function ends where the next text symbol begins; the last one (no next
// symbol) is cut at kMaxTextOffset.
TEST(Kallsyms, TextRangesEndAtTheNextSymbol)
{
    auto ks = KernelSymbols::parse(kSynthetic);
    auto ranges = ks.textRanges([](std::string_view n) { return n == "sem_lock" || n == "ext4_readdir"; });
    ASSERT_EQ(ranges.size(), 2u);
    EXPECT_EQ(ranges[0], std::make_pair(uint64_t{0xffffffff81001800}, uint64_t{0xffffffff81002000}));
    EXPECT_EQ(ranges[1].first, 0xffffffffc0001200u);
    EXPECT_EQ(ranges[1].second, 0xffffffffc0001200u + KernelSymbols::kMaxTextOffset);
    // Two names at one address: the range runs to the next address, not to the alias.
    auto stext = ks.textRanges([](std::string_view n) { return n == "_stext"; });
    ASSERT_EQ(stext.size(), 1u);
    EXPECT_EQ(stext[0].second, 0xffffffff81001000u);
}

TEST(Kallsyms, OutsideTextIsUnresolved)
{
    auto ks = KernelSymbols::parse(kSynthetic);
    EXPECT_FALSE(ks.resolveText(0xffffffff80000000));  // below every symbol
    // Far beyond the last function: a gap, not a 16 MiB function.
    EXPECT_FALSE(ks.resolveText(0xffffffff81002000 + KernelSymbols::kMaxTextOffset));
}

TEST(Kallsyms, DataSymbolsOnlyWhenExportedBroadly)
{
    // A few exported data symbols (CONFIG_KALLSYMS_ALL off) are not trusted.
    auto few = KernelSymbols::parse(kSynthetic);
    EXPECT_FALSE(few.hasDataSymbols());
    EXPECT_FALSE(few.resolveData(0xffffffff82000000));

    auto all = KernelSymbols::parse(withDataSymbols(kSynthetic));
    ASSERT_TRUE(all.hasDataSymbols());
    auto d = all.resolveData(0xffffffff82000000);
    ASSERT_TRUE(d);
    EXPECT_EQ(d->name, "rename_lock");
    EXPECT_EQ(d->offset, 0u);
    d = all.resolveData(0xffffffff82000108);
    ASSERT_TRUE(d);
    EXPECT_EQ(d->name, "tasklist_lock");
    EXPECT_EQ(d->offset, 8u);
    // A heap address is no global variable.
    EXPECT_FALSE(all.resolveData(0xffff888004a3c000));
    // Text never resolves as data.
    EXPECT_FALSE(all.resolveData(0xffffffff81001010));

    EXPECT_EQ(all.dataAddressOf("tasklist_lock"), 0xffffffff82000100u);
    EXPECT_FALSE(all.dataAddressOf("do_semtimedop")) << "a function is no data symbol";
    EXPECT_FALSE(few.dataAddressOf("rename_lock")) << "a few exported data symbols are not trusted";
}

TEST(Kallsyms, HiddenAddressesGiveOneClearLine)
{
    const char* hidden = "0000000000000000 T _stext\n0000000000000000 T do_semtimedop\n";
    try {
        KernelSymbols::parse(hidden, "/proc/kallsyms");
        FAIL() << "all-zero kallsyms accepted";
    } catch (const SymbolError& e) {
        std::string what = e.what();
        EXPECT_NE(what.find("kptr_restrict"), std::string::npos) << what;
        EXPECT_EQ(what.find('\n'), std::string::npos) << what;
    }
}

TEST(Kallsyms, MalformedLineNamesTheLine)
{
    try {
        KernelSymbols::parse("ffffffff81000000 T _stext\nnot an address here\n", "k.txt");
        FAIL() << "malformed kallsyms accepted";
    } catch (const SymbolError& e) {
        EXPECT_NE(std::string(e.what()).find("k.txt:2"), std::string::npos) << e.what();
    }
    EXPECT_THROW(KernelSymbols::parse(""), SymbolError);
    EXPECT_THROW(KernelSymbols::load("/nonexistent/kallsyms"), SymbolError);
}

TEST(Kallsyms, RealProcKallsyms)
{
    KernelSymbols ks;
    try {
        ks = KernelSymbols::load();
    } catch (const SymbolError& e) {
        GTEST_SKIP() << "skipped: /proc/kallsyms unusable here: " << e.what();
    }
    ASSERT_GT(ks.textCount(), 1000u);
    // Find a known function's address by reading the file independently.
    std::ifstream in("/proc/kallsyms");
    std::string addr, type, name;
    uint64_t schedule = 0;
    while (in >> addr >> type >> name) {
        if (name == "schedule" && (type == "T" || type == "t")) {
            schedule = std::stoull(addr, nullptr, 16);
            break;
        }
        in.ignore(4096, '\n');
    }
    ASSERT_NE(schedule, 0u) << "no 'schedule' in /proc/kallsyms";
    auto r = ks.resolveText(schedule + 4);
    ASSERT_TRUE(r);
    EXPECT_EQ(r->name, "schedule");
    EXPECT_EQ(r->offset, 4u);
    EXPECT_EQ(r->module, "");
    EXPECT_EQ(ks.addressOf("schedule"), schedule);
}
