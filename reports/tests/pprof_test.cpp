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
} // namespace

TEST(Pprof, DecodesBackToTheCaptureTotals)
{
    const Capture c = readCapture(test::fixture("baseline.lockscope.json"));
    const std::string gz = findExporter("pprof")->write(c, {});
    ASSERT_GE(gz.size(), 2u);
    EXPECT_EQ(uint8_t(gz[0]), 0x1f);
    EXPECT_EQ(uint8_t(gz[1]), 0x8b);
    test::writeFile(test::artifactDir() + "/baseline.pb.gz", gz);
    const auto profile = parse(gunzip(gz));

    std::vector<std::string> strings;
    for (const auto& f : profile)
        if (f.number == 6)
            strings.push_back(f.bytes);
    ASSERT_FALSE(strings.empty());
    EXPECT_EQ(strings[0], "");
    auto str = [&](uint64_t i) { return strings.at(i); };

    std::vector<std::pair<std::string, std::string>> types;
    std::map<uint64_t, std::string> functions;  // id -> name
    std::map<uint64_t, uint64_t> locationFn;    // location id -> function id
    uint64_t sampleCount = 0, sumCount = 0, sumDelay = 0, sumHold = 0;
    std::map<std::string, uint64_t> delayByLock;
    std::string kernel;
    for (const auto& f : profile) {
        if (f.number == 1) {
            const auto vt = parse(f.bytes);
            types.emplace_back(str(vt.at(0).varint), str(vt.at(1).varint));
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
            EXPECT_NE(id, 0u);
            locationFn[id] = fn;
        }
    }
    for (const auto& f : profile) {
        if (f.number != 2)
            continue;
        ++sampleCount;
        std::vector<uint64_t> locs, values;
        std::string lock;
        for (const auto& g : parse(f.bytes)) {
            if (g.number == 1)
                locs = packed(g.bytes);
            if (g.number == 2)
                values = packed(g.bytes);
            if (g.number == 3) {
                const auto l = parse(g.bytes);
                if (str(l.at(0).varint) == "lock")
                    lock = str(l.at(1).varint);
                if (str(l.at(0).varint) == "kernel_release")
                    kernel = str(l.at(1).varint);
            }
        }
        ASSERT_EQ(values.size(), 3u);
        ASSERT_FALSE(locs.empty());
        for (uint64_t id : locs)
            EXPECT_TRUE(locationFn.count(id)) << "sample refers to missing location " << id;
        sumCount += values[0];
        sumDelay += values[1];
        sumHold += values[2];
        delayByLock[lock] += values[1];
        if (lock == "spinlock@sem_lock") {
            EXPECT_EQ(functions.at(locationFn.at(locs.front())), "queued_spin_lock_slowpath") << "leaf first";
        }
    }
    ASSERT_EQ(types.size(), 3u);
    EXPECT_EQ(types[0], (std::pair<std::string, std::string>{"contentions", "count"}));
    EXPECT_EQ(types[1], (std::pair<std::string, std::string>{"delay", "nanoseconds"}));
    EXPECT_EQ(types[2], (std::pair<std::string, std::string>{"hold", "nanoseconds"}));
    EXPECT_EQ(kernel, c.meta.kernel_release);

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
    EXPECT_EQ(sampleCount, sites);
    EXPECT_EQ(sumCount, count);
    EXPECT_EQ(sumDelay, delay);
    EXPECT_EQ(sumHold, hold);
}
