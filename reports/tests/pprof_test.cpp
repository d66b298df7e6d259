// SPDX-License-Identifier: GPL-2.0-or-later
#include <gtest/gtest.h>

#include <map>
#include <zlib.h>

#include "lockscope/capture/io.h"
#include "lockscope/reports/exchange.h"
#include "test_support.h"

// Decodes the exported profile.proto with an independent, minimal protobuf
// reader and checks it against the capture.
using namespace lockscope;
using namespace lockscope::reports;

namespace {
std::string gunzip(const std::string& in)
{
    z_stream zs{};
    if (inflateInit2(&zs, 15 + 16) != Z_OK)
        throw std::runtime_error("inflateInit2");
    std::string out;
    char buf[65536];
    zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(in.data()));
    zs.avail_in = uInt(in.size());
    int rc;
    do {
        zs.next_out = reinterpret_cast<Bytef*>(buf);
        zs.avail_out = sizeof buf;
        rc = inflate(&zs, Z_NO_FLUSH);
        if (rc != Z_OK && rc != Z_STREAM_END)
            throw std::runtime_error("inflate failed");
        out.append(buf, sizeof buf - zs.avail_out);
    } while (rc != Z_STREAM_END);
    inflateEnd(&zs);
    return out;
}

struct Field {
    uint32_t number;
    uint64_t varint = 0;
    std::string bytes;
};

std::vector<Field> parse(const std::string& msg)
{
    std::vector<Field> out;
    size_t i = 0;
    auto varint = [&]() {
        uint64_t v = 0;
        for (unsigned shift = 0;; shift += 7) {
            if (i >= msg.size() || shift > 63)
                throw std::runtime_error("truncated varint");
            const auto b = uint8_t(msg[i++]);
            v |= uint64_t(b & 0x7f) << shift;
            if (!(b & 0x80))
                return v;
        }
    };
    while (i < msg.size()) {
        const uint64_t key = varint();
        Field f{uint32_t(key >> 3), 0, {}};
        switch (key & 7) {
        case 0: f.varint = varint(); break;
        case 2: {
            const uint64_t len = varint();
            if (i + len > msg.size())
                throw std::runtime_error("truncated bytes");
            f.bytes = msg.substr(i, len);
            i += len;
            break;
        }
        default: throw std::runtime_error("unexpected wire type");
        }
        out.push_back(std::move(f));
    }
    return out;
}

std::vector<uint64_t> packed(const std::string& bytes)
{
    std::vector<uint64_t> v;
    size_t i = 0;
    while (i < bytes.size()) {
        uint64_t x = 0;
        for (unsigned shift = 0;; shift += 7) {
            const auto b = uint8_t(bytes[i++]);
            x |= uint64_t(b & 0x7f) << shift;
            if (!(b & 0x80))
                break;
        }
        v.push_back(x);
    }
    return v;
}
// A decoded profile: sample types, and per sample its functions (leaf
// first), values and labels (numeric labels as their decimal text).
struct Decoded {
    std::vector<std::pair<std::string, std::string>> types;
    std::string defaultType;
    struct Sample {
        std::vector<std::string> functions;
        std::vector<uint64_t> values;
        std::map<std::string, std::string> labels;
    };
    std::vector<Sample> samples;
};

Decoded decode(const std::string& gz)
{
    const auto profile = parse(gunzip(gz));
    std::vector<std::string> strings;
    for (const auto& f : profile)
        if (f.number == 6)
            strings.push_back(f.bytes);
    auto str = [&](uint64_t i) { return strings.at(i); };
    std::map<uint64_t, std::string> functions;
    std::map<uint64_t, uint64_t> locationFn;
    Decoded d;
    for (const auto& f : profile) {
        if (f.number == 1) {
            const auto vt = parse(f.bytes);
            d.types.emplace_back(str(vt.at(0).varint), str(vt.at(1).varint));
        } else if (f.number == 14) {
            d.defaultType = str(f.varint);
        } else if (f.number == 5) {
            uint64_t id = 0, name = 0;
            for (const auto& g : parse(f.bytes)) {
                if (g.number == 1)
                    id = g.varint;
                else if (g.number == 2)
                    name = g.varint;
            }
            functions[id] = str(name);
        } else if (f.number == 4) {
            uint64_t id = 0, fn = 0;
            for (const auto& g : parse(f.bytes)) {
                if (g.number == 1)
                    id = g.varint;
                if (g.number == 4)
                    for (const auto& l : parse(g.bytes))
                        if (l.number == 1)
                            fn = l.varint;
            }
            locationFn[id] = fn;
        }
    }
    for (const auto& f : profile) {
        if (f.number != 2)
            continue;
        Decoded::Sample s;
        for (const auto& g : parse(f.bytes)) {
            if (g.number == 1)
                for (uint64_t loc : packed(g.bytes))
                    s.functions.push_back(functions.at(locationFn.at(loc)));
            if (g.number == 2)
                s.values = packed(g.bytes);
            if (g.number == 3) {
                std::string key, value;
                for (const auto& l : parse(g.bytes)) {
                    if (l.number == 1)
                        key = str(l.varint);
                    else if (l.number == 2)
                        value = str(l.varint);
                    else if (l.number == 3)
                        value = std::to_string(int64_t(l.varint));
                }
                s.labels[key] = value;
            }
        }
        d.samples.push_back(std::move(s));
    }
    return d;
}
} // namespace

// Go's mutex profile: the wait is charged to the holder's stack. One sample
// per holder of a site, owners labelled with their task.
TEST(Pprof, HoldersProfileChargesTheWaitToTheOwnersStacks)
{
    Capture c = readCapture(test::fixture("baseline.lockscope.json"));
    Lock& l = c.locks.at(0);
    l.sites.at(0).holders = {Holder{12, 30, 5000000, 4242, "ls-owner"}, Holder{13, 2, 700000, 4242, "ls-owner"}};
    l.sites.at(1).holders = {Holder{12, 10, 1500000, 777, ""}, Holder{999, 1, 1000}};
    const Decoded d = decode(findExporter("pprof-holders")->write(c, {}));
    EXPECT_EQ(d.types, (std::vector<std::pair<std::string, std::string>>{{"contentions", "count"},
                                                                         {"delay", "nanoseconds"}}));
    EXPECT_EQ(d.defaultType, "delay");
    ASSERT_EQ(d.samples.size(), 4u);
    const StackIndex index(c);
    const auto& first = d.samples[0];
    ASSERT_EQ(first.functions.size(), index.find(12)->frames.size());
    EXPECT_EQ(first.functions.front(), index.find(12)->frames.front().function) << "the holder's leaf first";
    EXPECT_EQ(first.values, (std::vector<uint64_t>{30, 5000000}));
    EXPECT_EQ(first.labels.at("lock"), l.key);
    EXPECT_EQ(first.labels.at("owner_comm"), "ls-owner");
    EXPECT_EQ(first.labels.at("owner_tid"), "4242");
    EXPECT_EQ(d.samples[2].labels.at("owner_comm"), "?") << "an owner whose comm was not read";
    EXPECT_EQ(d.samples[3].functions, std::vector<std::string>{"[no stack]"}) << "a stack id the capture lacks";
    EXPECT_FALSE(d.samples[3].labels.count("owner_tid")) << "a spinlock holder names no task";
    EXPECT_EQ(decode(findExporter("pprof-holders")->write(c, {Weight::Count})).defaultType, "contentions");
    EXPECT_TRUE(decode(findExporter("pprof-holders")->write(readCapture(test::fixture("baseline.lockscope.json")), {}))
                    .samples.empty());
}

TEST(Pprof, DecodesBackToTheCaptureTotals)
{
    const Capture c = readCapture(test::fixture("baseline.lockscope.json"));
    const std::string gz = findExporter("pprof")->write(c, {});
    ASSERT_GE(gz.size(), 2u);
    EXPECT_EQ(uint8_t(gz[0]), 0x1f);
    EXPECT_EQ(uint8_t(gz[1]), 0x8b);
    test::writeFile(test::artifactDir() + "/baseline.pb.gz", gz);
    const Decoded d = decode(gz); // throws on a sample naming a missing location or function

    EXPECT_EQ(d.types, (std::vector<std::pair<std::string, std::string>>{
                           {"contentions", "count"}, {"delay", "nanoseconds"}, {"hold", "nanoseconds"}}));
    uint64_t sumCount = 0, sumDelay = 0, sumHold = 0;
    std::map<std::string, uint64_t> delayByLock;
    for (const auto& s : d.samples) {
        ASSERT_EQ(s.values.size(), 3u);
        ASSERT_FALSE(s.functions.empty());
        EXPECT_EQ(s.labels.at("kernel_release"), c.meta.kernel_release);
        sumCount += s.values[0];
        sumDelay += s.values[1];
        sumHold += s.values[2];
        delayByLock[s.labels.at("lock")] += s.values[1];
        if (s.labels.at("lock") == "spinlock@sem_lock") {
            EXPECT_EQ(s.functions.front(), "queued_spin_lock_slowpath") << "leaf first";
        }
    }

    uint64_t sites = 0, count = 0, delay = 0, hold = 0;
    for (const auto& l : c.locks) {
        uint64_t lockDelay = 0;
        for (const auto& s : l.sites) {
            ++sites;
            count += s.wait.count() ? s.wait.count() : s.hold.count();
            delay += s.wait.total();
            lockDelay += s.wait.total();
            hold += s.hold.total();
        }
        EXPECT_EQ(delayByLock[l.key], lockDelay) << l.key;
    }
    EXPECT_EQ(d.samples.size(), sites);
    EXPECT_EQ(sumCount, count);
    EXPECT_EQ(sumDelay, delay);
    EXPECT_EQ(sumHold, hold);
}

// profile.proto's strings are UTF-8 (Go's decoders may insist): a comm or
// a symbol that is not is written with U+FFFD for each bad byte.
TEST(Pprof, NamesThatAreNotUtf8BecomeReplacementCharacters)
{
    const Capture c = test::notUtf8Capture();
    for (const char* format : {"pprof", "pprof-holders"}) {
        const Decoded d = decode(findExporter(format)->write(c, {}));
        ASSERT_FALSE(d.samples.empty()) << format;
        const auto& s = d.samples.front();
        EXPECT_EQ(s.labels.at("lock"), "spinlock@caller\xef\xbf\xbd") << format;
        EXPECT_EQ(s.functions.front(), std::string(format) == "pprof" ? "caller\xef\xbf\xbd" : "holder\xef\xbf\xbd\xef\xbf\xbd")
            << format;
        if (std::string(format) == "pprof-holders") {
            EXPECT_EQ(s.labels.at("owner_comm"), "ls-\xef\xbf\xbdowner");
        }
    }
}
