// SPDX-License-Identifier: GPL-2.0-or-later
// The fast reader's document: the header, the small sections (with the
// checks of capture_reader.cpp), and parseCapture(), which gives what the
// fast reader declines to the reference reader.
#include "fast_reader.h"

#include <algorithm>
#include <cctype>
#include <climits>
#include <cmath>
#include <cstring>
#include <unordered_set>
#include <utility>

#include "capture_reader.h"
#include "json_pieces.h"
#include "stats_json.h"
#include "zstd_text.h"

namespace lockscope {
namespace detail::fast {

uint64_t address(od::value& v)
{
    const std::string_view s = v.get_string();
    need(s.size() >= 3 && s.size() <= 18 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X'));
    uint64_t a = 0;
    for (const char c : s.substr(2)) {
        const int d = c >= '0' && c <= '9' ? c - '0'
            : c >= 'a' && c <= 'f'         ? c - 'a' + 10
            : c >= 'A' && c <= 'F'         ? c - 'A' + 10
                                           : -1;
        need(d >= 0);
        a = (a << 4) | static_cast<uint64_t>(d);
    }
    return a;
}

double nonNegativeDouble(od::value& v)
{
    const double d = v.get_double();
    need(std::isfinite(d) && d >= 0.0);
    return d;
}

std::vector<std::string> stringList(od::value& v)
{
    std::vector<std::string> out;
    for (auto e : v.get_array()) {
        od::value x = e.value();
        out.push_back(str(x));
    }
    return out;
}

namespace {

Virtualization virtualization(od::value& v)
{
    static constexpr std::array<std::string_view, 6> keys { "kind", "hypervisor", "detected_by", "vcpus",
        "host_cores", "host_load" };
    Virtualization z;
    const uint64_t seen = members(v.get_object(), keys, [&](size_t i, od::value& x) {
        switch (i) {
        case 0: z.kind = str(x); break;
        case 1: z.hypervisor = str(x); break;
        case 2: z.detected_by = str(x); break;
        case 3: z.vcpus = u32(x); break;
        case 4: z.host_cores = u32(x); break;
        default: z.host_load = nonNegativeDouble(x); break;
        }
    });
    static constexpr std::string_view kinds[] = { "none", "kvm", "tcg", "tcg-multi", "vm" };
    need((seen & bitsBelow(3)) == bitsBelow(3) && std::ranges::find(kinds, z.kind) != std::end(kinds));
    return z;
}

std::map<std::string, std::string> filters(od::value& v)
{
    std::map<std::string, std::string> out;
    for (auto m : v.get_object()) {
        od::field f = std::move(m);
        const std::string_view k = f.unescaped_key();
        std::string key(k);
        out.insert_or_assign(std::move(key), str(f.value())); // the last of a repeated key, as a DOM keeps
    }
    return out;
}

Meta meta(od::value& v)
{
    static constexpr std::array<std::string_view, 14> keys { "tool_version", "label", "kernel_release",
        "kernel_version", "kernel_build_id", "hostname", "cpu_model", "cpu_count", "start_time", "duration_s",
        "command", "filters", "syscall_timing_skipped", "virtualization" };
    Meta m;
    std::string* const strings[] = { &m.tool_version, &m.label, &m.kernel_release, &m.kernel_version,
        &m.kernel_build_id, &m.hostname, &m.cpu_model };
    const uint64_t seen = members(v.get_object(), keys, [&](size_t i, od::value& x) {
        if (i < std::size(strings))
            *strings[i] = str(x);
        else if (i == 7)
            m.cpu_count = u32(x);
        else if (i == 8)
            m.start_time = str(x);
        else if (i == 9)
            m.duration_s = nonNegativeDouble(x);
        else if (i == 10)
            m.command = stringList(x);
        else if (i == 11)
            m.filters = filters(x);
        else if (i == 12)
            m.syscall_timing_skipped = str(x);
        else
            m.virtualization = virtualization(x);
    });
    need((seen & bitsBelow(12)) == bitsBelow(12));
    need(std::ranges::all_of(m.kernel_build_id, [](char c) { return std::isxdigit(static_cast<unsigned char>(c)); }));
    need(m.start_time.empty() || isRfc3339(m.start_time));
    return m;
}

std::vector<ProbeStatus> probes(od::value& v)
{
    static constexpr std::array<std::string_view, 5> keys { "name", "target", "hook", "attached", "reason" };
    std::vector<ProbeStatus> out;
    std::unordered_set<std::string> names;
    for (auto e : v.get_array()) {
        od::value x = e.value();
        ProbeStatus p;
        const uint64_t seen = members(x.get_object(), keys, [&](size_t i, od::value& m) {
            if (i == 3)
                p.attached = m.get_bool();
            else
                *(i == 0 ? &p.name : i == 1 ? &p.target : i == 2 ? &p.hook : &p.reason) = str(m);
        });
        need(seen == bitsBelow(5) && !p.name.empty() && (!p.attached || !p.hook.empty())
            && (p.attached || !p.reason.empty()) && names.insert(p.name).second);
        out.push_back(std::move(p));
    }
    return out;
}

Stats stats(od::value& v)
{
    static constexpr auto keys = [] {
        std::array<std::string_view, std::size(kStatsFields)> k {};
        for (size_t i = 0; i < k.size(); ++i)
            k[i] = kStatsFields[i].name;
        return k;
    }();
    Stats s;
    const uint64_t seen
        = members(v.get_object(), keys, [&](size_t i, od::value& x) { s.*kStatsFields[i].counter = u64(x); });
    for (size_t i = 0; i < keys.size(); ++i)
        need(!kStatsFields[i].always || (seen >> i & 1U));
    return s;
}

LatencyEntry latency(od::value& v, const State& st)
{
    static constexpr std::array<std::string_view, 5> keys { "name", "latency", "errors", "sample_period",
        "calls" };
    LatencyEntry e;
    uint64_t period = 1;
    const uint64_t seen = members(v.get_object(), keys, [&](size_t i, od::value& x) {
        switch (i) {
        case 0: e.name = nonEmptyStr(x); break;
        case 1: e.latency = hist(x, st); break;
        case 2: e.errors = u64(x); break;
        case 3: period = u64(x); break;
        default: e.all_calls = u64(x); break;
        }
    });
    need((seen & bitsBelow(3)) == bitsBelow(3) && period >= 1 && period <= 1000000);
    e.sample_period = static_cast<uint32_t>(period);
    need(!(seen >> 4 & 1U) || e.all_calls >= e.latency.count());
    need(e.errors <= e.latency.count());
    return e;
}

std::vector<LatencyEntry> latencies(od::value& v, const State& st)
{
    std::vector<LatencyEntry> out;
    std::unordered_set<std::string> names;
    for (auto e : v.get_array()) {
        od::value x = e.value();
        out.push_back(latency(x, st));
        need(names.insert(out.back().name).second);
    }
    return out;
}

std::vector<LeafShare> leaves(od::value& v, uint64_t samples)
{
    static constexpr std::array<std::string_view, 3> keys { "function", "module", "samples" };
    std::vector<LeafShare> out;
    for (auto e : v.get_array()) {
        od::value x = e.value();
        LeafShare s;
        const uint64_t seen = members(x.get_object(), keys, [&](size_t i, od::value& m) {
            if (i == 2)
                s.samples = u64(m);
            else
                *(i == 0 ? &s.function : &s.module) = str(m);
        });
        need(seen == bitsBelow(3) && s.samples <= samples && (out.empty() || s.samples <= out.back().samples));
        out.push_back(std::move(s));
    }
    return out;
}

std::vector<StackCount> stackCounts(od::value& v, const State& st)
{
    static constexpr std::array<std::string_view, 2> keys { "stack_id", "count" };
    std::vector<StackCount> out;
    for (auto e : v.get_array()) {
        od::value x = e.value();
        StackCount c;
        const uint64_t seen = members(x.get_object(), keys, [&](size_t i, od::value& m) {
            if (i == 0)
                c.stack_id = u32(m);
            else
                c.count = u64(m);
        });
        need(seen == bitsBelow(2));
        st.checkRef(c.stack_id);
        out.push_back(c);
    }
    return out;
}

// top_leaves are checked against samples, so they are read after it.
CpuProfile cpu(od::value& v, const State& st)
{
    static constexpr std::array<std::string_view, 7> keys { "frequency_hz", "samples", "lock_samples",
        "idle_samples", "top_leaves", "stacks", "bpf_samples" };
    CpuProfile c;
    uint64_t got = 0;
    const uint64_t seen = members(v.get_object(), keys, [&](size_t i, od::value& x) {
        need(i < 4 || (got & bitsBelow(4)) == bitsBelow(4));
        got |= uint64_t { 1 } << i;
        switch (i) {
        case 0: c.frequency_hz = u32(x); break;
        case 1: c.samples = u64(x); break;
        case 2: c.lock_samples = u64(x); break;
        case 3: c.idle_samples = u64(x); break;
        case 4: c.top_leaves = leaves(x, c.samples); break;
        case 5: c.stacks = stackCounts(x, st); break;
        default: c.bpf_samples = u64(x); break;
        }
    });
    need((seen & bitsBelow(6)) == bitsBelow(6) && c.lock_samples <= c.samples &&
         c.idle_samples <= c.samples - c.lock_samples && c.bpf_samples.value_or(0) <= c.samples);
    return c;
}

int toInt(od::value& v)
{
    const int64_t x = v.get_int64();
    need(x >= INT_MIN && x <= INT_MAX);
    return static_cast<int>(x);
}

// Free-form JSON as nlohmann's parser would hold it (non-negative integers
// unsigned), fewer than maxLevel containers deep from the document's root
// (at the limit itself the reference reader decides).
nlohmann::json freeForm(od::value& v, unsigned level, unsigned maxLevel)
{
    const od::json_type type = v.type();
    switch (type) {
    case od::json_type::object: {
        need(level + 1 < maxLevel);
        nlohmann::json o = nlohmann::json::object();
        for (auto m : v.get_object()) {
            od::field f = std::move(m);
            const std::string_view k = f.unescaped_key();
            std::string key(k);
            o[std::move(key)] = freeForm(f.value(), level + 1, maxLevel); // a repeated key: the last
        }
        return o;
    }
    case od::json_type::array: {
        need(level + 1 < maxLevel);
        nlohmann::json a = nlohmann::json::array();
        for (auto e : v.get_array()) {
            od::value x = e.value();
            a.push_back(freeForm(x, level + 1, maxLevel));
        }
        return a;
    }
    case od::json_type::number: {
        const od::number_type t = v.get_number_type();
        if (t == od::number_type::floating_point_number) {
            const double d = v.get_double();
            need(std::isfinite(d));
            return d;
        }
        if (t == od::number_type::unsigned_integer)
            return u64(v);
        const int64_t i = v.get_int64();
        return i >= 0 ? nlohmann::json(static_cast<uint64_t>(i)) : nlohmann::json(i);
    }
    case od::json_type::string: return str(v);
    case od::json_type::boolean: {
        const bool b = v.get_bool();
        return b;
    }
    case od::json_type::null: need(v.is_null()); return nullptr;
    }
    decline();
}

Workload workload(od::value& v, unsigned maxLevel)
{
    static constexpr std::array<std::string_view, 4> keys { "command", "results", "exit_status", "signal" };
    Workload w;
    const uint64_t seen = members(v.get_object(), keys, [&](size_t i, od::value& x) {
        switch (i) {
        case 0: w.command = stringList(x); break;
        case 1:
            need(x.type() == od::json_type::object);
            w.results = freeForm(x, 2, maxLevel); // the root and workload are open
            break;
        case 2: w.exit_status = toInt(x); break;
        default: w.signal = toInt(x); break;
        }
    });
    need((seen & bitsBelow(2)) == bitsBelow(2) && (!w.signal || *w.signal > 0));
    return w;
}

enum Top : uint8_t { kFormat, kVersion, kMeta, kProbes, kStats, kStacks, kLocks, kSyscalls, kFunctions, kCpu,
    kWorkload, kSymbols };

// The header comes first, as the writer puts it: the layout decides how the rest is read.
void header(size_t i, od::value& x, State& st)
{
    if (i == kFormat) {
        const std::string_view format = x.get_string();
        need(format == kCaptureFormat);
    } else {
        const uint64_t version = u64(x);
        need(version == kCaptureVersion || version == kCaptureVersionCompact);
        st.compact = version == kCaptureVersionCompact;
    }
}

// The root object's members one piece at a time, and the symbols, stacks
// and locks a batch of elements at a time (json_pieces.h).
Capture document(od::parser& parser, const Input& in, unsigned maxLevel)
{
    const char* const text_end = in.text + in.readable;
    const Consumed& consumed = in.consumed;
    static constexpr std::array<std::string_view, 12> keys { "format", "version", "meta", "probes", "stats",
        "stacks", "locks", "syscalls", "functions", "cpu", "workload", "symbols" };
    auto bit = [](size_t i) { return uint64_t { 1 } << i; };
    Capture c;
    State st;
    uint64_t got = 0;
    auto member = [&](size_t i, od::value& x) {
        switch (i) {
        case kFormat:
        case kVersion: header(i, x, st); break;
        case kMeta: c.meta = meta(x); break;
        case kProbes: c.probes = probes(x); break;
        case kStats: c.stats = stats(x); break;
        case kSyscalls: c.syscalls = latencies(x, st); break;
        case kFunctions: c.functions = latencies(x, st); break;
        case kCpu: c.cpu = cpu(x, st); break;
        default: c.workload = workload(x, maxLevel); break;
        }
    };
    JsonCursor root(in.text, in.text + in.size, &in.more);
    need(root.take('{') && !root.take('}'));
    do {
        const std::string_view k = root.key();
        size_t i = 0;
        while (i < keys.size() && keys[i] != k)
            ++i;
        need(i < keys.size() && !(got & bit(i)));
        need(i <= kVersion || (got & bitsBelow(2)) == bitsBelow(2));
        // Symbols before the stacks that use them, stacks before what refers to them.
        need(i != kSymbols || st.compact);
        need(i != kStacks || !st.compact || (got & bit(kSymbols)));
        need((i != kLocks && i != kCpu) || (got & bit(kStacks)));
        got |= bit(i);
        if (i == kStacks) {
            eachElement(
                parser, root, text_end, c.stacks, [&](od::value& x) { addStack(x, st, c.stacks); }, consumed);
        } else if (i == kLocks) {
            eachElement(
                parser, root, text_end, c.locks, [&](od::value& x) { addLock(x, st, c.locks); }, consumed);
        } else if (i == kSymbols) {
            eachElement(
                parser, root, text_end, st.symbols, [&](od::value& x) { st.symbols.push_back(symbol(x)); });
        } else {
            const Span v = root.value();
            eachInPiece(parser, v, text_end, [&](od::value& x) { member(i, x); });
            if (consumed)
                consumed(v.end);
        }
    } while (root.take(','));
    need(root.take('}') && root.atEnd());
    need((got & bitsBelow(11)) == bitsBelow(11) && (!st.compact || (got & bit(kSymbols))));
    return c;
}

// Containers the format nests at most (root, locks, lock, sites, site, wait, hist).
constexpr unsigned kFormatDepth = 7;
// workload.results is checked to this depth below itself (capture_reader.cpp).
constexpr unsigned kResultsDepth = 32;

} // namespace

std::optional<Capture> parse(const Input& in, const ReadLimits& limits)
{
    // What is yet to be read is bounded by the readable room (readCapture checked the file's size).
    if (limits.max_depth <= kFormatDepth || in.size > limits.max_file_bytes
        || in.readable < in.size + kPadding)
        return std::nullopt;
    const unsigned maxLevel = std::min(limits.max_depth, kResultsDepth);
    try {
        od::parser parser;
        return document(parser, in, maxLevel);
    } catch (const simdjson::simdjson_error&) {
    } catch (const Decline&) {
    }
    return std::nullopt;
}

} // namespace detail::fast

namespace detail {

static_assert(kTextPadding == fast::kPadding);

namespace {

// The capture's JSON: the text itself, or what its zstd frames hold (the
// frames let go of as soon as they are decompressed).
CaptureText plain(CaptureText text, const ReadLimits& limits)
{
    while (text.size() < 4 && text.more()) { }
    if (!isZstd(text.view())) // *.lockscope.json.zst, or any capture compressed by hand
        return text;
    text.readAll();
    return zstdDecompress(text.view(), limits.max_file_bytes);
}

} // namespace

Capture parseCaptureText(
    CaptureText&& given, const std::function<CaptureText()>& reload, const ReadLimits& limits)
{
    CaptureText text = plain(std::move(given), limits);
    fast::Input in {
        .text = text.data(),
        .size = text.size(),
        .readable = text.readable(),
        .consumed = [&](const char* upTo) { text.release(upTo); },
    };
    if (text.readsOn())
        in.more = [&] {
            if (text.more() && text.size() > limits.max_file_bytes)
                fast::decline(); // the reference reader words it
            return text.data() + text.size();
        };
    if (auto c = fast::parse(in, limits))
        return std::move(*c);
    if (text.released()) { // read in part, then declined: the reference reader needs it all
        text = CaptureText {};
        text = reload(); // the reference reader decompresses a compressed one itself
    }
    text.readAll();
    return parseCaptureReference(text.view(), limits);
}

} // namespace detail

// The text is copied as the reader gets to it, as a file is read.
Capture parseCapture(std::string_view text, const ReadLimits& limits)
{
    auto copy = [&] {
        detail::CaptureText owned;
        owned.reserve(text.size());
        owned.readFrom(
            [text, at = size_t { 0 }](char* into, size_t room) mutable {
                std::memcpy(into, text.data() + at, room); // the room is what is left at most
                at += room;
                return room;
            },
            text.size());
        owned.more();
        return owned;
    };
    return detail::parseCaptureText(copy(), copy, limits);
}

} // namespace lockscope
