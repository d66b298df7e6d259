// SPDX-License-Identifier: GPL-2.0-or-later
// Captures that say where they were recorded: a report and a comparison say,
// in one plain line, when the times are emulated or the vCPUs overcommitted,
// and compare says when the two sides were recorded differently. Spin
// acquisition times (record --hold) are shown beside waits and holds.
#include <algorithm>

#include <gtest/gtest.h>

#include "lockscope/capture/io.h"
#include "lockscope/capture/virtualization.h"
#include "lockscope/reports/exchange.h"
#include "lockscope/reports/render.h"
#include "lockscope/reports/report.h"
#include "test_support.h"

using namespace lockscope;
using namespace lockscope::reports;

namespace {

std::string toJsonText(const Capture& c) { return toJson(c).dump(); }

const char* kPreemption = "waits include vCPU preemption by the host: compare shapes and counts, not absolute times";

Virtualization labGuest(const char* kind, uint32_t vcpus, uint32_t cores, std::optional<double> load = {})
{
    Virtualization v;
    v.kind = kind;
    v.hypervisor = std::string(kind).rfind("tcg", 0) == 0 ? "" : "KVM";
    v.detected_by = "lab";
    v.vcpus = vcpus;
    v.host_cores = cores;
    v.host_load = load;
    return v;
}

Capture recordedOn(const Virtualization& v)
{
    Capture c = readCapture(test::fixture("baseline.lockscope.json"));
    c.meta.virtualization = v;
    return c;
}

size_t linesWith(const std::vector<std::string>& lines, const std::string& what)
{
    return size_t(std::count_if(lines.begin(), lines.end(),
                                [&](const std::string& l) { return l.find(what) != std::string::npos; }));
}

} // namespace

TEST(Virtualization, TheRuleSaysWhenTimesAreNotToBeTrusted)
{
    EXPECT_TRUE(timesCaveat(labGuest("tcg-multi", 2, 2)).find(kPreemption) != std::string::npos)
        << "emulated times, even without overcommit";
    EXPECT_NE(timesCaveat(labGuest("kvm", 4, 2)), "") << "more vCPUs than host cores";
    EXPECT_NE(timesCaveat(labGuest("kvm", 2, 4, 6.5)), "") << "a host loaded past its cores";
    EXPECT_EQ(timesCaveat(labGuest("kvm", 2, 4, 1.0)), "") << "KVM with idle cores to spare";
    Virtualization metal;
    metal.kind = "none";
    EXPECT_EQ(timesCaveat(metal), "");
    EXPECT_EQ(timesCaveat(Virtualization{}), "") << "older captures say nothing";
    EXPECT_EQ(describeVirtualization(labGuest("tcg-multi", 4, 2, 3.44)),
              "a TCG-emulated guest (multi-threaded), 4 vCPUs on 2 host cores, host load 3.4");
}

TEST(Virtualization, AReportOfAnOvercommittedGuestSaysSoInOneLine)
{
    const Report r = buildReport(recordedOn(labGuest("tcg-multi", 4, 2)), {});
    EXPECT_EQ(linesWith(r.warnings, kPreemption), 1u);
    const std::string text = render(r, Format::Text);
    EXPECT_NE(text.find("4 vCPUs on 2 host cores"), std::string::npos) << "the header says where";
    EXPECT_NE(render(r, Format::Json).find("\"virtualization\""), std::string::npos);

    const Report bare = buildReport(readCapture(test::fixture("baseline.lockscope.json")), {});
    EXPECT_EQ(linesWith(bare.warnings, "vCPU"), 0u);
}

TEST(Virtualization, CompareSaysItOnceAndWhenTheSidesWereRecordedDifferently)
{
    const Capture a = recordedOn(labGuest("tcg-multi", 4, 2));
    const Capture b = recordedOn(labGuest("tcg-multi", 4, 2, 5.0));
    const Comparison same = compare(a, b);
    EXPECT_EQ(linesWith(same.warnings, kPreemption), 1u) << "one line for both sides";
    EXPECT_EQ(linesWith(same.warnings, "recorded differently"), 0u) << "the host's load is not how it was recorded";

    const Comparison differ = compare(a, recordedOn(labGuest("tcg-multi", 2, 2)));
    ASSERT_EQ(linesWith(differ.warnings, "recorded differently"), 1u);
    EXPECT_NE(render(differ, Format::Text).find("before: a TCG-emulated guest (multi-threaded), 4 vCPUs"),
              std::string::npos);

    Virtualization metal;
    metal.kind = "none";
    metal.detected_by = "cpuid";
    const Comparison clean = compare(recordedOn(metal), recordedOn(metal));
    EXPECT_EQ(linesWith(clean.warnings, "vCPU"), 0u);
    EXPECT_EQ(linesWith(clean.warnings, "recorded differently"), 0u);
}

TEST(Virtualization, TheMetaSurvivesTheFileAndOlderCapturesReadAsNotRecorded)
{
    Capture c = recordedOn(labGuest("tcg-multi", 4, 2, 2.5));
    const Capture back = parseCapture(toJsonText(c));
    EXPECT_EQ(back.meta.virtualization, c.meta.virtualization);
    EXPECT_TRUE(readCapture(test::fixture("baseline.lockscope.json")).meta.virtualization.kind.empty());
    std::string bad = toJsonText(c);
    bad.replace(bad.find("\"tcg-multi\""), 11, "\"warp-drive\"");
    try {
        parseCapture(bad);
        ADD_FAILURE() << "an unknown kind was accepted";
    } catch (const std::exception& e) {
        EXPECT_NE(std::string(e.what()).find("virtualization"), std::string::npos) << e.what();
    }
}

namespace {

// The fixture with one lock's spin acquisitions timed: 40 of 3 us, 10 of 48 us.
Capture withAcquires(const char* key, uint64_t slow)
{
    Capture c = readCapture(test::fixture("baseline.lockscope.json"));
    c.meta.filters["acquire_min_ns"] = "1000";
    for (auto& l : c.locks)
        if (l.key == key) {
            l.sites.front().acquire.add(3000, 40);
            l.sites.front().acquire.add(48000, slow);
            l.acquire = l.sites.front().acquire;
        }
    return c;
}

} // namespace

TEST(Acquire, ReportsShowSpinAcquisitionsBesideWaitsAndHolds)
{
    const Capture c = withAcquires("rename_lock", 10);
    const Report r = buildReport(c, {});
    const auto row = std::find_if(r.locks.begin(), r.locks.end(), [](const LockRow& l) { return l.key == "rename_lock"; });
    ASSERT_NE(row, r.locks.end());
    EXPECT_EQ(row->acquire.count(), 50u);
    EXPECT_GE(row->p99_acquire_ns, 32768u);
    const std::string text = render(r, Format::Text);
    EXPECT_NE(text.find("spin acquisitions of at least 1.00 us"), std::string::npos) << text;
    EXPECT_NE(text.find("acquire time (spin in the lock call):"), std::string::npos);
    EXPECT_NE(render(r, Format::Json).find("\"p99_acquire_ns\""), std::string::npos);
    EXPECT_NE(render(r, Format::Html).find("acquire time"), std::string::npos);

    // The capture file keeps them; captures without keep their old text.
    EXPECT_EQ(parseCapture(toJsonText(c)).locks, c.locks);
    const Capture plain = readCapture(test::fixture("baseline.lockscope.json"));
    EXPECT_EQ(render(buildReport(plain, {}), Format::Text).find("spin acquisitions"), std::string::npos);
    EXPECT_EQ(toJsonText(plain).find("\"acquire\""), std::string::npos);
}

TEST(Acquire, CompareShowsThemAsRowsAndExportsWeighByThem)
{
    const Comparison cmp = compare(withAcquires("rename_lock", 10), withAcquires("rename_lock", 200));
    const LockDelta& l = test::findLock(cmp, "rename_lock");
    EXPECT_TRUE(l.has_acquire);
    EXPECT_EQ(l.acquire_count.before, 50.0);
    EXPECT_EQ(l.acquire_count.after, 240.0);
    const std::string text = render(cmp, Format::Text);
    EXPECT_NE(text.find("spin acquisitions of at least 1.00 us (lock call entry to return; shown, not judged)"),
              std::string::npos) << text;
    EXPECT_NE(render(cmp, Format::Json).find("\"acquire_count\""), std::string::npos);

    const Capture c = withAcquires("rename_lock", 10);
    ExportOptions o;
    o.weight = Weight::Acquire;
    const std::string folded = findExporter("folded")->write(c, o);
    EXPECT_NE(folded.find(" " + std::to_string(40 * 3000 + 10 * 48000)), std::string::npos) << folded;
    EXPECT_EQ(parseWeight("acquire"), Weight::Acquire);
}
