// SPDX-License-Identifier: GPL-2.0-or-later
// The capture file format (docs/capture-format.md): model <-> JSON, a
// validating reader that reports the first problem as one line with its JSON
// path, and an atomic 0600 writer.
#include "lockscope/capture/io.h"

#include "error_text.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cinttypes>
#include <climits>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>
#include <unordered_map>
#include <unordered_set>
#include <utility>

namespace lockscope {

using nlohmann::json;

namespace {

// ---------------------------------------------------------------- paths ---

// A JSON path built on the stack while validating and formatted only when an
// error is reported, so that valid files with 100k stacks cost no strings.
struct Path {
    const Path* parent = nullptr;
    const char* key = nullptr; // member name, or nullptr for an array index
    size_t index = 0;

    Path operator/(const char* k) const { return Path { this, k, 0 }; }
    Path operator[](size_t i) const { return Path { this, nullptr, i }; }

    std::string str() const
    {
        std::string out;
        append(out);
        return out.empty() ? std::string("document") : out;
    }

private:
    void append(std::string& out) const
    {
        if (parent)
            parent->append(out);
        if (key) {
            if (!*key)
                return; // the root
            if (!out.empty())
                out += '.';
            out += key;
        } else {
            out += '[';
            out += std::to_string(index);
            out += ']';
        }
    }
};

const Path kRoot { nullptr, "", 0 };

using detail::errnoText;
using detail::printable;

[[noreturn]] void fail(const Path& at, const std::string& problem)
{
    throw CaptureError(at.str() + ": " + problem);
}

std::string describe(const json& v)
{
    switch (v.type()) {
    case json::value_t::null:
        return "null";
    case json::value_t::boolean:
        return v.get<bool>() ? "true" : "false";
    case json::value_t::string:
        return "a string \"" + printable(v.get_ref<const std::string&>(), 40) + "\"";
    case json::value_t::array:
        return "an array";
    case json::value_t::object:
        return "an object";
    case json::value_t::number_integer:
        return std::to_string(v.get<int64_t>());
    case json::value_t::number_unsigned:
        return std::to_string(v.get<uint64_t>());
    case json::value_t::number_float: {
        char buf[40];
        std::snprintf(buf, sizeof buf, "%.17g", v.get<double>());
        return buf;
    }
    case json::value_t::binary:
        return "binary data";
    case json::value_t::discarded:
        return "a discarded value";
    }
    return "an unknown value";
}

// ------------------------------------------------------ field accessors ---

const json& member(const json& obj, const Path& at, const char* name)
{
    auto it = obj.find(name);
    if (it == obj.end())
        fail(at / name, "missing (required field)");
    return *it;
}

// nullptr when the optional member is absent or null.
const json* optionalMember(const json& obj, const char* name)
{
    auto it = obj.find(name);
    if (it == obj.end() || it->is_null())
        return nullptr;
    return &*it;
}

const json& expectObject(const json& v, const Path& at)
{
    if (!v.is_object())
        fail(at, "expected an object, got " + describe(v));
    return v;
}

const json& expectArray(const json& v, const Path& at)
{
    if (!v.is_array())
        fail(at, "expected an array, got " + describe(v));
    return v;
}

const json& objectAt(const json& obj, const Path& at, const char* name)
{
    return expectObject(member(obj, at, name), at / name);
}

const json& arrayAt(const json& obj, const Path& at, const char* name)
{
    return expectArray(member(obj, at, name), at / name);
}

std::string toStr(const json& v, const Path& at)
{
    if (!v.is_string())
        fail(at, "expected a string, got " + describe(v));
    return v.get<std::string>();
}

std::string strAt(const json& obj, const Path& at, const char* name)
{
    return toStr(member(obj, at, name), at / name);
}

std::string nonEmptyStrAt(const json& obj, const Path& at, const char* name)
{
    std::string s = strAt(obj, at, name);
    if (s.empty())
        fail(at / name, "must not be empty");
    return s;
}

bool boolAt(const json& obj, const Path& at, const char* name)
{
    const json& v = member(obj, at, name);
    if (!v.is_boolean())
        fail(at / name, "expected true or false, got " + describe(v));
    return v.get<bool>();
}

uint64_t toU64(const json& v, const Path& at, uint64_t maxValue = UINT64_MAX)
{
    // The parser stores non-negative integers as unsigned, but documents built
    // in code hold them as signed: accept both.
    if (v.is_number_integer()) {
        if (!v.is_number_unsigned() && v.get<int64_t>() < 0)
            fail(at, "expected a non-negative integer, got " + describe(v));
        const uint64_t u
            = v.is_number_unsigned() ? v.get<uint64_t>() : static_cast<uint64_t>(v.get<int64_t>());
        if (u > maxValue)
            fail(at, "out of range: " + std::to_string(u) + " > " + std::to_string(maxValue));
        return u;
    }
    if (v.is_number_float()) {
        const double d = v.get<double>();
        if (std::isfinite(d) && d == std::floor(d))
            fail(at, "integer out of range (max " + std::to_string(maxValue) + "), got " + describe(v));
        fail(at, "expected an integer, got " + describe(v));
    }
    fail(at, "expected a non-negative integer, got " + describe(v));
}

uint64_t u64At(const json& obj, const Path& at, const char* name)
{
    return toU64(member(obj, at, name), at / name);
}

uint32_t u32At(const json& obj, const Path& at, const char* name)
{
    return static_cast<uint32_t>(toU64(member(obj, at, name), at / name, UINT32_MAX));
}

int toInt(const json& v, const Path& at)
{
    if (v.is_number_integer()) { // signed or unsigned
        if (v.is_number_unsigned()) {
            const uint64_t u = v.get<uint64_t>();
            if (u > static_cast<uint64_t>(INT_MAX))
                fail(at, "integer out of range, got " + describe(v));
            return static_cast<int>(u);
        }
        const int64_t s = v.get<int64_t>();
        if (s < INT_MIN || s > INT_MAX)
            fail(at, "integer out of range, got " + describe(v));
        return static_cast<int>(s);
    }
    fail(at, "expected an integer, got " + describe(v));
}

double nonNegativeDoubleAt(const json& obj, const Path& at, const char* name)
{
    const json& v = member(obj, at, name);
    if (!v.is_number())
        fail(at / name, "expected a number, got " + describe(v));
    const double d = v.get<double>();
    if (!std::isfinite(d) || d < 0.0)
        fail(at / name, "expected a finite non-negative number, got " + describe(v));
    return d;
}

std::string hexAddress(uint64_t a)
{
    char buf[24];
    std::snprintf(buf, sizeof buf, "0x%" PRIx64, a);
    return buf;
}

// Addresses are strings because JavaScript (the GUI's web views, jq) loses
// precision on integers above 2^53, and kernel addresses are all above it.
uint64_t toAddress(const json& v, const Path& at)
{
    if (!v.is_string())
        fail(at, "expected a hex address string such as \"0xffffffff81000000\", got " + describe(v));
    const auto& s = v.get_ref<const std::string&>();
    if (s.size() < 3 || s.size() > 18 || s[0] != '0' || (s[1] != 'x' && s[1] != 'X'))
        fail(at, "expected a hex address \"0x\" + 1..16 hex digits, got " + describe(v));
    uint64_t a = 0;
    for (size_t i = 2; i < s.size(); ++i) {
        const char c = s[i];
        unsigned d = 0;
        if (c >= '0' && c <= '9')
            d = static_cast<unsigned>(c - '0');
        else if (c >= 'a' && c <= 'f')
            d = static_cast<unsigned>(c - 'a' + 10);
        else if (c >= 'A' && c <= 'F')
            d = static_cast<unsigned>(c - 'A' + 10);
        else
            fail(at, "expected a hex address \"0x\" + 1..16 hex digits, got " + describe(v));
        a = (a << 4) | d;
    }
    return a;
}

std::optional<uint64_t> optionalAddressAt(const json& obj, const Path& at, const char* name)
{
    const json* v = optionalMember(obj, name);
    if (!v)
        return std::nullopt;
    return toAddress(*v, at / name);
}

std::vector<std::string> stringListAt(const json& obj, const Path& at, const char* name)
{
    const json& arr = arrayAt(obj, at, name);
    const Path here = at / name;
    std::vector<std::string> out;
    out.reserve(arr.size());
    for (size_t i = 0; i < arr.size(); ++i)
        out.push_back(toStr(arr[i], here[i]));
    return out;
}

// RFC 3339 date-time (YYYY-MM-DDTHH:MM:SS[.frac](Z|+HH:MM|-HH:MM)); the empty
// string means unknown.
bool isRfc3339(const std::string& s)
{
    auto digits = [&](size_t pos, size_t n) {
        if (pos + n > s.size())
            return false;
        for (size_t i = pos; i < pos + n; ++i)
            if (s[i] < '0' || s[i] > '9')
                return false;
        return true;
    };
    if (!digits(0, 4) || s.size() < 20 || s[4] != '-' || !digits(5, 2) || s[7] != '-' || !digits(8, 2)
        || (s[10] != 'T' && s[10] != 't') || !digits(11, 2) || s[13] != ':' || !digits(14, 2) || s[16] != ':'
        || !digits(17, 2))
        return false;
    size_t p = 19;
    if (s[p] == '.') {
        ++p;
        const size_t start = p;
        while (p < s.size() && s[p] >= '0' && s[p] <= '9')
            ++p;
        if (p == start)
            return false;
    }
    if (p == s.size())
        return false;
    if ((s[p] == 'Z' || s[p] == 'z') && p + 1 == s.size())
        return true;
    return (s[p] == '+' || s[p] == '-') && p + 6 == s.size() && digits(p + 1, 2) && s[p + 3] == ':'
        && digits(p + 4, 2);
}

// ----------------------------------------------------------- histograms ---

template <class J> J histToJson(const Log2Hist& h)
{
    J buckets = J::array();
    for (uint64_t b : h.buckets())
        buckets.push_back(b);
    return J { { "count", h.count() }, { "total_ns", h.total() }, { "min_ns", h.min() },
        { "max_ns", h.max() }, { "hist", std::move(buckets) } };
}

std::string bucketRange(unsigned b)
{
    return "bucket " + std::to_string(b) + " = [" + std::to_string(Log2Hist::bucketLow(b)) + ", "
        + std::to_string(Log2Hist::bucketHigh(b)) + "]";
}

// Says which part of an inconsistent histogram is wrong, in the order a
// reader would check it by hand.
std::string histProblem(const std::array<uint64_t, Log2Hist::kBuckets>& b, uint64_t count, uint64_t total,
    uint64_t min, uint64_t max)
{
    uint64_t sum = 0;
    bool overflow = false;
    unsigned first = Log2Hist::kBuckets;
    unsigned last = 0;
    for (unsigned i = 0; i < Log2Hist::kBuckets; ++i) {
        if (!b[i])
            continue;
        overflow |= __builtin_add_overflow(sum, b[i], &sum);
        first = std::min(first, i);
        last = i;
    }
    if (overflow)
        return "bucket counts overflow 64 bits";
    if (sum != count)
        return "bucket counts sum to " + std::to_string(sum) + " but count is " + std::to_string(count);
    if (count == 0)
        return "an empty histogram (count 0) must have total_ns, min_ns and max_ns 0";
    if (min > max)
        return "min_ns " + std::to_string(min) + " > max_ns " + std::to_string(max);
    if (Log2Hist::bucketOf(min) != first)
        return "min_ns " + std::to_string(min) + " is not in the first non-empty " + bucketRange(first);
    if (Log2Hist::bucketOf(max) != last)
        return "max_ns " + std::to_string(max) + " is not in the last non-empty " + bucketRange(last);
    return "total_ns " + std::to_string(total) + " is outside [count*min_ns, count*max_ns]";
}

Log2Hist histFromJson(const json& obj, const Path& at)
{
    expectObject(obj, at);
    const uint64_t count = u64At(obj, at, "count");
    const uint64_t total = u64At(obj, at, "total_ns");
    const uint64_t min = u64At(obj, at, "min_ns");
    const uint64_t max = u64At(obj, at, "max_ns");
    const json& hist = member(obj, at, "hist");
    const Path hp = at / "hist";
    if (!hist.is_array())
        fail(hp, "expected an array of 64 integers, got " + describe(hist));
    if (hist.size() != Log2Hist::kBuckets)
        fail(hp, "expected 64 integers, got " + std::to_string(hist.size()));
    std::array<uint64_t, Log2Hist::kBuckets> buckets {};
    for (unsigned i = 0; i < Log2Hist::kBuckets; ++i)
        buckets[i] = toU64(hist[i], hp[i]);
    const Log2Hist h = Log2Hist::fromParts(buckets, count, total, min, max);
    if (!h.consistent() || (count == 0 && min != 0))
        fail(at, "inconsistent histogram: " + histProblem(buckets, count, total, min, max));
    return h;
}

// -------------------------------------------------------------- writers ---

template <class J> J frameToJson(const Frame& f)
{
    J j { { "function", f.function }, { "offset", f.offset }, { "module", f.module } };
    if (f.address)
        j["address"] = hexAddress(*f.address);
    return j;
}

template <class J> J latencyToJson(const LatencyEntry& e)
{
    J j { { "name", e.name }, { "latency", histToJson<J>(e.latency) }, { "errors", e.errors } };
    if (e.sample_period != 1) {
        j["sample_period"] = e.sample_period;
        j["calls"] = e.all_calls;
    }
    return j;
}

// ------------------------------------------------------------- readers ---

Meta metaFromJson(const json& j, const Path& at)
{
    expectObject(j, at);
    Meta m;
    m.tool_version = strAt(j, at, "tool_version");
    m.label = strAt(j, at, "label");
    m.kernel_release = strAt(j, at, "kernel_release");
    m.kernel_version = strAt(j, at, "kernel_version");
    m.kernel_build_id = strAt(j, at, "kernel_build_id");
    for (char c : m.kernel_build_id)
        if (!std::isxdigit(static_cast<unsigned char>(c)))
            fail(at / "kernel_build_id",
                "expected hex digits or \"\", got \"" + printable(m.kernel_build_id) + "\"");
    m.hostname = strAt(j, at, "hostname");
    m.cpu_model = strAt(j, at, "cpu_model");
    m.cpu_count = u32At(j, at, "cpu_count");
    m.start_time = strAt(j, at, "start_time");
    if (!m.start_time.empty() && !isRfc3339(m.start_time))
        fail(at / "start_time",
            "expected an RFC 3339 time such as \"2024-05-01T12:00:00Z\" or \"\", got \""
                + printable(m.start_time) + "\"");
    m.duration_s = nonNegativeDoubleAt(j, at, "duration_s");
    m.command = stringListAt(j, at, "command");
    const json& filters = objectAt(j, at, "filters");
    const Path fp = at / "filters";
    for (const auto& [k, v] : filters.items()) {
        if (!v.is_string())
            fail(fp, "filter \"" + printable(k) + "\": expected a string value, got " + describe(v));
        m.filters.emplace(k, v.get<std::string>());
    }
    if (optionalMember(j, "syscall_timing_skipped"))
        m.syscall_timing_skipped = strAt(j, at, "syscall_timing_skipped");
    return m;
}

ProbeStatus probeFromJson(const json& j, const Path& at)
{
    expectObject(j, at);
    ProbeStatus p;
    p.name = nonEmptyStrAt(j, at, "name");
    p.target = strAt(j, at, "target");
    p.hook = strAt(j, at, "hook");
    p.attached = boolAt(j, at, "attached");
    p.reason = strAt(j, at, "reason");
    if (p.attached && p.hook.empty())
        fail(at / "hook", "an attached probe needs its hook kind (tp_btf, raw_tp, tracepoint, ...)");
    if (!p.attached && p.reason.empty())
        fail(at / "reason", "a skipped probe needs the reason it was skipped");
    return p;
}

Stats statsFromJson(const json& j, const Path& at)
{
    expectObject(j, at);
    Stats s;
    s.events = u64At(j, at, "events");
    s.lost = u64At(j, at, "lost");
    s.map_full = u64At(j, at, "map_full");
    s.stack_failures = u64At(j, at, "stack_failures");
    s.aborted_waits = u64At(j, at, "aborted_waits");
    s.unmatched = u64At(j, at, "unmatched");
    s.recursion_misses = u64At(j, at, "recursion_misses");
    // Written only by holder-stack captures (absent = 0).
    if (optionalMember(j, "holder_not_found"))
        s.holder_not_found = u64At(j, at, "holder_not_found");
    // Written only when stack sampling left some waits without a stack.
    if (optionalMember(j, "stacks_unsampled"))
        s.stacks_unsampled = u64At(j, at, "stacks_unsampled");
    if (optionalMember(j, "own_lock_events"))
        s.own_lock_events = u64At(j, at, "own_lock_events");
    if (optionalMember(j, "impossible_holds"))
        s.impossible_holds = u64At(j, at, "impossible_holds");
    if (optionalMember(j, "hold_races"))
        s.hold_races = u64At(j, at, "hold_races");
    if (optionalMember(j, "waits_untimed"))
        s.waits_untimed = u64At(j, at, "waits_untimed");
    if (optionalMember(j, "syscalls_untimed"))
        s.syscalls_untimed = u64At(j, at, "syscalls_untimed");
    if (optionalMember(j, "cpu_unstacked"))
        s.cpu_unstacked = u64At(j, at, "cpu_unstacked");
    return s;
}

Stack stackFromJson(const json& j, const Path& at)
{
    expectObject(j, at);
    Stack s;
    s.id = u32At(j, at, "id");
    const std::string kind = strAt(j, at, "kind");
    if (kind == "kernel")
        s.kind = StackKind::Kernel;
    else if (kind == "user")
        s.kind = StackKind::User;
    else
        fail(at / "kind", "expected \"kernel\" or \"user\", got \"" + printable(kind) + "\"");
    const json& frames = arrayAt(j, at, "frames");
    const Path fp = at / "frames";
    if (frames.empty())
        fail(fp, "a stack needs at least one frame");
    s.frames.reserve(frames.size());
    for (size_t i = 0; i < frames.size(); ++i) {
        const json& f = expectObject(frames[i], fp[i]);
        const Path p = fp[i];
        Frame fr;
        fr.function = strAt(f, p, "function");
        fr.offset = u64At(f, p, "offset");
        fr.module = strAt(f, p, "module");
        fr.address = optionalAddressAt(f, p, "address");
        if (fr.function.empty() && !fr.address)
            fail(p, "an unresolved frame (function \"\") needs its address");
        s.frames.push_back(std::move(fr));
    }
    return s;
}

struct StackRefs {
    std::unordered_map<uint32_t, StackKind> kinds;

    void check(uint32_t id, const Path& at, std::optional<StackKind> want = std::nullopt) const
    {
        auto it = kinds.find(id);
        if (it == kinds.end())
            fail(at, "no stack with id " + std::to_string(id) + " in stacks");
        if (want && it->second != *want)
            fail(at,
                "stack " + std::to_string(id) + " is a " + toString(it->second) + " stack, expected a "
                    + toString(*want) + " stack");
    }
};

// Optional (record --holder-stacks): who held the lock while this site waited.
std::vector<Holder> holdersFromJson(const json& arr, const Path& at, const StackRefs& refs)
{
    std::vector<Holder> out;
    out.reserve(arr.size());
    for (size_t i = 0; i < arr.size(); ++i) {
        const Path p = at[i];
        const json& j = expectObject(arr[i], p);
        Holder h;
        h.stack_id = u32At(j, p, "stack_id");
        refs.check(h.stack_id, p / "stack_id", StackKind::Kernel);
        h.count = u64At(j, p, "count");
        if (h.count == 0)
            fail(p / "count", "must be at least 1 (a holder is listed because waits found it)");
        h.wait_ns = u64At(j, p, "wait_ns");
        // Written by record --lock-owner (absent in older captures and for spinlocks).
        if (const json* t = optionalMember(j, "owner_tid"))
            h.owner_tid = static_cast<uint32_t>(toU64(*t, p / "owner_tid", UINT32_MAX));
        if (optionalMember(j, "owner_comm"))
            h.owner_comm = strAt(j, p, "owner_comm");
        out.push_back(h);
    }
    return out;
}

Lock lockFromJson(const json& j, const Path& at, const StackRefs& refs)
{
    expectObject(j, at);
    Lock l;
    l.key = nonEmptyStrAt(j, at, "key");
    l.type = nonEmptyStrAt(j, at, "type");
    // Written by record --lock-names / --per-cgroup (absent in older captures).
    if (optionalMember(j, "name"))
        l.name = nonEmptyStrAt(j, at, "name");
    if (optionalMember(j, "cgroup"))
        l.cgroup = nonEmptyStrAt(j, at, "cgroup");
    l.address = optionalAddressAt(j, at, "address");
    l.instances = u32At(j, at, "instances");
    if (l.instances == 0)
        fail(at / "instances", "must be at least 1");
    l.aborted = u64At(j, at, "aborted");
    l.wait = histFromJson(member(j, at, "wait"), at / "wait");
    l.hold = histFromJson(member(j, at, "hold"), at / "hold");
    const json& sites = arrayAt(j, at, "sites");
    const Path sp = at / "sites";
    l.sites.reserve(sites.size());
    for (size_t i = 0; i < sites.size(); ++i) {
        const Path p = sp[i];
        const json& s = expectObject(sites[i], p);
        LockSite site;
        site.stack_id = u32At(s, p, "stack_id");
        refs.check(site.stack_id, p / "stack_id");
        if (const json* u = optionalMember(s, "user_stack_id")) {
            site.user_stack_id = static_cast<uint32_t>(toU64(*u, p / "user_stack_id", UINT32_MAX));
            refs.check(*site.user_stack_id, p / "user_stack_id", StackKind::User);
        }
        site.wait = histFromJson(member(s, p, "wait"), p / "wait");
        site.hold = histFromJson(member(s, p, "hold"), p / "hold");
        if (optionalMember(s, "holders"))
            site.holders = holdersFromJson(arrayAt(s, p, "holders"), p / "holders", refs);
        l.sites.push_back(std::move(site));
    }
    return l;
}

std::vector<LatencyEntry> latenciesFromJson(const json& arr, const Path& at)
{
    expectArray(arr, at);
    std::vector<LatencyEntry> out;
    std::unordered_map<std::string, size_t> seen;
    out.reserve(arr.size());
    for (size_t i = 0; i < arr.size(); ++i) {
        const Path p = at[i];
        const json& j = expectObject(arr[i], p);
        LatencyEntry e;
        e.name = nonEmptyStrAt(j, p, "name");
        auto [it, fresh] = seen.emplace(e.name, i);
        if (!fresh)
            fail(p / "name",
                "duplicate name \"" + printable(e.name) + "\" (also at index " + std::to_string(it->second)
                    + ")");
        e.latency = histFromJson(member(j, p, "latency"), p / "latency");
        e.errors = u64At(j, p, "errors");
        if (j.contains("sample_period")) {
            const uint64_t period = u64At(j, p, "sample_period");
            if (period < 1 || period > 1000000)
                fail(p / "sample_period", std::to_string(period) + " is not a sampling period (1..1000000)");
            e.sample_period = static_cast<uint32_t>(period);
        }
        if (j.contains("calls")) {
            e.all_calls = u64At(j, p, "calls");
            if (e.all_calls < e.latency.count())
                fail(p / "calls",
                    std::to_string(e.all_calls) + " calls but " + std::to_string(e.latency.count())
                        + " of them timed");
        }
        if (e.errors > e.latency.count())
            fail(p / "errors",
                std::to_string(e.errors) + " errors but only " + std::to_string(e.latency.count())
                    + " calls");
        out.push_back(std::move(e));
    }
    return out;
}

CpuProfile cpuFromJson(const json& j, const Path& at, const StackRefs& refs)
{
    expectObject(j, at);
    CpuProfile c;
    c.frequency_hz = u32At(j, at, "frequency_hz");
    c.samples = u64At(j, at, "samples");
    c.lock_samples = u64At(j, at, "lock_samples");
    c.idle_samples = u64At(j, at, "idle_samples");
    if (c.lock_samples > c.samples)
        fail(at / "lock_samples",
            std::to_string(c.lock_samples) + " exceeds samples (" + std::to_string(c.samples) + ")");
    if (c.idle_samples > c.samples - c.lock_samples)
        fail(at / "idle_samples",
            std::to_string(c.idle_samples) + " + lock_samples exceeds samples (" + std::to_string(c.samples)
                + ")");
    const json& leaves = arrayAt(j, at, "top_leaves");
    const Path lp = at / "top_leaves";
    c.top_leaves.reserve(leaves.size());
    for (size_t i = 0; i < leaves.size(); ++i) {
        const Path p = lp[i];
        const json& l = expectObject(leaves[i], p);
        LeafShare s;
        s.function = strAt(l, p, "function");
        s.module = strAt(l, p, "module");
        s.samples = u64At(l, p, "samples");
        if (s.samples > c.samples)
            fail(p / "samples",
                std::to_string(s.samples) + " exceeds cpu.samples (" + std::to_string(c.samples) + ")");
        if (i > 0 && s.samples > c.top_leaves.back().samples)
            fail(p / "samples", "top_leaves must be sorted by samples, descending");
        c.top_leaves.push_back(std::move(s));
    }
    const json& stacks = arrayAt(j, at, "stacks");
    const Path sp = at / "stacks";
    c.stacks.reserve(stacks.size());
    for (size_t i = 0; i < stacks.size(); ++i) {
        const Path p = sp[i];
        const json& s = expectObject(stacks[i], p);
        StackCount sc;
        sc.stack_id = u32At(s, p, "stack_id");
        refs.check(sc.stack_id, p / "stack_id");
        sc.count = u64At(s, p, "count");
        c.stacks.push_back(sc);
    }
    return c;
}

// Free-form JSON is stored as is; its depth is bounded so that copying it
// (recursive in nlohmann) stays cheap even for documents not built by parse().
void checkDepth(const json& root, const Path& at, unsigned maxDepth)
{
    std::vector<std::pair<const json*, unsigned>> todo { { &root, 0 } };
    while (!todo.empty()) {
        auto [v, depth] = todo.back();
        todo.pop_back();
        if (depth > maxDepth)
            fail(at, "nested deeper than " + std::to_string(maxDepth) + " levels");
        if (v->is_structured())
            for (const auto& child : *v)
                todo.emplace_back(&child, depth + 1);
    }
}

Workload workloadFromJson(const json& j, const Path& at)
{
    expectObject(j, at);
    Workload w;
    w.command = stringListAt(j, at, "command");
    if (const json* v = optionalMember(j, "exit_status"))
        w.exit_status = toInt(*v, at / "exit_status");
    if (const json* v = optionalMember(j, "signal")) {
        w.signal = toInt(*v, at / "signal");
        if (*w.signal <= 0)
            fail(at / "signal", "expected a positive signal number, got " + std::to_string(*w.signal));
    }
    const json& results = objectAt(j, at, "results");
    checkDepth(results, at / "results", ReadLimits {}.max_depth);
    w.results = results;
    return w;
}

} // namespace

// -------------------------------------------------------------- public ---

namespace {

// Built as ordered_json by the writer so that files read top-down (format and
// version first); toJson() returns the plain J type of the API.
template <class J> J stackToJson(const Stack& st)
{
    J frames = J::array();
    for (const auto& f : st.frames)
        frames.push_back(frameToJson<J>(f));
    return J { { "id", st.id }, { "kind", toString(st.kind) }, { "frames", std::move(frames) } };
}

template <class J> J lockToJson(const Lock& l)
{
    J sites = J::array();
    for (const auto& site : l.sites) {
        J js { { "stack_id", site.stack_id }, { "wait", histToJson<J>(site.wait) },
            { "hold", histToJson<J>(site.hold) } };
        if (site.user_stack_id)
            js["user_stack_id"] = *site.user_stack_id;
        if (!site.holders.empty()) {
            J hs = J::array();
            for (const Holder& h : site.holders) {
                J jh { { "stack_id", h.stack_id }, { "count", h.count }, { "wait_ns", h.wait_ns } };
                if (h.owner_tid)
                    jh["owner_tid"] = *h.owner_tid;
                if (!h.owner_comm.empty())
                    jh["owner_comm"] = h.owner_comm;
                hs.push_back(std::move(jh));
            }
            js["holders"] = std::move(hs);
        }
        sites.push_back(std::move(js));
    }
    J jl { { "key", l.key }, { "type", l.type } };
    if (!l.name.empty())
        jl["name"] = l.name;
    if (!l.cgroup.empty())
        jl["cgroup"] = l.cgroup;
    if (l.address)
        jl["address"] = hexAddress(*l.address);
    jl["instances"] = l.instances;
    jl["aborted"] = l.aborted;
    jl["wait"] = histToJson<J>(l.wait);
    jl["hold"] = histToJson<J>(l.hold);
    jl["sites"] = std::move(sites);
    return jl;
}

template <class J> J buildJson(const Capture& c, bool withBig)
{
    J doc = J::object();
    doc["format"] = kCaptureFormat;
    doc["version"] = kCaptureVersion;

    const Meta& m = c.meta;
    J filters = J::object();
    for (const auto& [k, v] : m.filters)
        filters[k] = v;
    doc["meta"] = J { { "tool_version", m.tool_version }, { "label", m.label },
        { "kernel_release", m.kernel_release }, { "kernel_version", m.kernel_version },
        { "kernel_build_id", m.kernel_build_id }, { "hostname", m.hostname }, { "cpu_model", m.cpu_model },
        { "cpu_count", m.cpu_count }, { "start_time", m.start_time }, { "duration_s", m.duration_s },
        { "command", m.command }, { "filters", std::move(filters) } };
    if (!m.syscall_timing_skipped.empty()) // absent = timed (or --no-syscalls), as before
        doc["meta"]["syscall_timing_skipped"] = m.syscall_timing_skipped;

    J probes = J::array();
    for (const auto& p : c.probes)
        probes.push_back(J { { "name", p.name }, { "target", p.target }, { "hook", p.hook },
            { "attached", p.attached }, { "reason", p.reason } });
    doc["probes"] = std::move(probes);

    const Stats& s = c.stats;
    doc["stats"] = J { { "events", s.events }, { "lost", s.lost }, { "map_full", s.map_full },
        { "stack_failures", s.stack_failures }, { "aborted_waits", s.aborted_waits },
        { "unmatched", s.unmatched }, { "recursion_misses", s.recursion_misses } };
    if (s.holder_not_found)
        doc["stats"]["holder_not_found"] = s.holder_not_found;
    if (s.stacks_unsampled)
        doc["stats"]["stacks_unsampled"] = s.stacks_unsampled;
    if (s.own_lock_events)
        doc["stats"]["own_lock_events"] = s.own_lock_events;
    if (s.impossible_holds)
        doc["stats"]["impossible_holds"] = s.impossible_holds;
    if (s.hold_races)
        doc["stats"]["hold_races"] = s.hold_races;
    if (s.waits_untimed)
        doc["stats"]["waits_untimed"] = s.waits_untimed;
    if (s.syscalls_untimed)
        doc["stats"]["syscalls_untimed"] = s.syscalls_untimed;
    if (s.cpu_unstacked)
        doc["stats"]["cpu_unstacked"] = s.cpu_unstacked;

    // The writer streams these two (the bulk of a capture) element by element.
    J stacks = J::array();
    if (withBig)
        for (const auto& st : c.stacks)
            stacks.push_back(stackToJson<J>(st));
    doc["stacks"] = std::move(stacks);

    J locks = J::array();
    if (withBig)
        for (const auto& l : c.locks)
            locks.push_back(lockToJson<J>(l));
    doc["locks"] = std::move(locks);

    J syscalls = J::array();
    for (const auto& e : c.syscalls)
        syscalls.push_back(latencyToJson<J>(e));
    doc["syscalls"] = std::move(syscalls);
    J functions = J::array();
    for (const auto& e : c.functions)
        functions.push_back(latencyToJson<J>(e));
    doc["functions"] = std::move(functions);

    J leaves = J::array();
    for (const auto& l : c.cpu.top_leaves)
        leaves.push_back(J { { "function", l.function }, { "module", l.module }, { "samples", l.samples } });
    J cpuStacks = J::array();
    for (const auto& sc : c.cpu.stacks)
        cpuStacks.push_back(J { { "stack_id", sc.stack_id }, { "count", sc.count } });
    doc["cpu"] = J { { "frequency_hz", c.cpu.frequency_hz }, { "samples", c.cpu.samples },
        { "lock_samples", c.cpu.lock_samples }, { "idle_samples", c.cpu.idle_samples },
        { "top_leaves", std::move(leaves) }, { "stacks", std::move(cpuStacks) } };

    J w { { "command", c.workload.command } };
    if (c.workload.exit_status)
        w["exit_status"] = *c.workload.exit_status;
    if (c.workload.signal)
        w["signal"] = *c.workload.signal;
    w["results"] = c.workload.results;
    doc["workload"] = std::move(w);
    return doc;
}

} // namespace

nlohmann::json toJson(const Capture& c)
{
    return buildJson<json>(c, true);
}

namespace {

// Stacks and locks converted while parsing (see CaptureSax), so that their
// DOM, ~10x the text in nlohmann's representation, never exists all at once.
struct Streamed {
    bool stacks = false; // stacks were converted during parsing
    bool locks = false;
    std::vector<Stack> stackList;
    std::vector<Lock> lockList;
    StackRefs refs;
    std::unordered_map<uint32_t, size_t> stackAt;
    std::unordered_map<std::string, size_t> lockAt;

    void addStack(const json& j, size_t i)
    {
        const Path at = kRoot / "stacks";
        stackList.push_back(stackFromJson(j, at[i]));
        const Stack& st = stackList.back();
        auto [it, fresh] = stackAt.emplace(st.id, i);
        if (!fresh)
            fail(at[i] / "id",
                "duplicate stack id " + std::to_string(st.id) + " (also at stacks["
                    + std::to_string(it->second) + "])");
        refs.kinds.emplace(st.id, st.kind);
    }

    void addLock(const json& j, size_t i)
    {
        const Path at = kRoot / "locks";
        lockList.push_back(lockFromJson(j, at[i], refs));
        auto [it, fresh] = lockAt.emplace(lockList.back().key, i);
        if (!fresh)
            fail(at[i] / "key",
                "duplicate lock key \"" + printable(lockList.back().key) + "\" (also at locks["
                    + std::to_string(it->second) + "])");
    }
};

void checkFormatAndVersion(const json& doc)
{
    const Path& root = kRoot;
    const json& format = member(doc, root, "format");
    if (!format.is_string() || format.get_ref<const std::string&>() != kCaptureFormat)
        fail(root / "format",
            std::string("expected \"") + kCaptureFormat + "\", got " + describe(format)
                + ": not a lockscope capture");
    const json& version = member(doc, root, "version");
    if (!version.is_number_integer())
        fail(root / "version", "expected an integer format version, got " + describe(version));
    const bool newer = version.is_number_unsigned()
        ? version.get<uint64_t>() > static_cast<uint64_t>(kCaptureVersion)
        : version.get<int64_t>() > kCaptureVersion;
    if (newer)
        throw CaptureError("format version " + describe(version) + " is newer than this lockscope reads ("
            + std::to_string(kCaptureVersion) + "): upgrade lockscope");
    if (version.get<int64_t>() != kCaptureVersion)
        fail(root / "version",
            "format version " + describe(version) + " is not valid (this lockscope reads "
                + std::to_string(kCaptureVersion) + ")");
}

Capture captureFromJson(const json& doc, Streamed& streamed)
{
    const Path& root = kRoot;
    if (!doc.is_object())
        fail(root, "expected a lockscope capture (a JSON object), got " + describe(doc));
    checkFormatAndVersion(doc);

    Capture c;
    c.meta = metaFromJson(member(doc, root, "meta"), root / "meta");

    const json& probes = arrayAt(doc, root, "probes");
    const Path pp = root / "probes";
    std::unordered_map<std::string, size_t> probeNames;
    c.probes.reserve(probes.size());
    for (size_t i = 0; i < probes.size(); ++i) {
        c.probes.push_back(probeFromJson(probes[i], pp[i]));
        auto [it, fresh] = probeNames.emplace(c.probes.back().name, i);
        if (!fresh)
            fail(pp[i] / "name",
                "duplicate probe \"" + printable(c.probes.back().name) + "\" (also at probes["
                    + std::to_string(it->second) + "])");
    }

    c.stats = statsFromJson(member(doc, root, "stats"), root / "stats");

    const json& stacks = arrayAt(doc, root, "stacks");
    if (!streamed.stacks) {
        streamed.stackList.reserve(stacks.size());
        for (size_t i = 0; i < stacks.size(); ++i)
            streamed.addStack(stacks[i], i);
    }
    const json& locks = arrayAt(doc, root, "locks");
    if (!streamed.locks) {
        streamed.lockList.reserve(locks.size());
        for (size_t i = 0; i < locks.size(); ++i)
            streamed.addLock(locks[i], i);
    }

    c.syscalls = latenciesFromJson(member(doc, root, "syscalls"), root / "syscalls");
    c.functions = latenciesFromJson(member(doc, root, "functions"), root / "functions");
    c.cpu = cpuFromJson(member(doc, root, "cpu"), root / "cpu", streamed.refs);
    c.workload = workloadFromJson(member(doc, root, "workload"), root / "workload");
    c.stacks = std::move(streamed.stackList);
    c.locks = std::move(streamed.lockList);
    return c;
}

// Thrown from the SAX handler to stop before a deep document is built.
struct TooDeep { };

// Builds the DOM like nlohmann's own SAX DOM builder, with two differences:
// nesting is refused beyond max_depth as soon as a container opens, and once
// "format"/"version" have been seen and are right, each element of the
// top-level "stacks" and "locks" arrays is validated and converted as soon as
// it closes, then dropped from the DOM. Documents in another order (hand
// written) simply keep their DOM and are validated at the end.
class CaptureSax {
public:
    using number_integer_t = json::number_integer_t;
    using number_unsigned_t = json::number_unsigned_t;
    using number_float_t = json::number_float_t;
    using string_t = json::string_t;
    using binary_t = json::binary_t;

    CaptureSax(unsigned maxDepth, Streamed& streamed)
        : maxDepth_(maxDepth)
        , streamed_(streamed)
    {
    }

    json& root() { return root_; }

    bool null() { return value(json(nullptr)); }
    bool boolean(bool v) { return value(json(v)); }
    bool number_integer(number_integer_t v) { return value(json(v)); }
    bool number_unsigned(number_unsigned_t v) { return value(json(v)); }
    bool number_float(number_float_t v, const string_t&) { return value(json(v)); }
    bool string(string_t& v) { return value(json(std::move(v))); }
    bool binary(binary_t& v) { return value(json::binary(std::move(v))); }
    bool key(string_t& k)
    {
        key_ = std::move(k);
        return true;
    }
    bool start_object(std::size_t) { return open(json::object()); }
    bool start_array(std::size_t) { return open(json::array()); }
    bool end_object() { return close(); }
    bool end_array() { return close(); }

    template <class Exception> bool parse_error(std::size_t, const std::string&, const Exception& ex)
    {
        throw ex;
    }

private:
    enum class Section { Other, Stacks, Locks };

    json* place(json&& v)
    {
        if (open_.empty()) {
            root_ = std::move(v);
            return &root_;
        }
        json& top = *open_.back();
        if (top.is_array()) {
            top.push_back(std::move(v));
            return &top.back();
        }
        json& slot = top[key_];
        slot = std::move(v);
        return &slot;
    }

    bool value(json&& v)
    {
        if (open_.size() == 1 && open_.back()->is_object()) {
            if (key_ == "format")
                formatOk_ = v.is_string() && v.get_ref<const std::string&>() == kCaptureFormat;
            else if (key_ == "version")
                versionOk_
                    = v.is_number_unsigned() && v.get<uint64_t>() == static_cast<uint64_t>(kCaptureVersion);
        }
        place(std::move(v));
        if (open_.size() == 2 && section_ != Section::Other)
            convertLast(); // a scalar where a stack or lock should be: let the converter say so
        return true;
    }

    void convertLast()
    {
        json& array = *open_.back();
        if (section_ == Section::Stacks)
            streamed_.addStack(array.back(), converted_);
        else
            streamed_.addLock(array.back(), converted_);
        ++converted_;
        array.get_ref<json::array_t&>().pop_back();
    }

    bool open(json&& container)
    {
        if (open_.size() >= maxDepth_)
            throw TooDeep {};
        const bool array = container.is_array();
        if (open_.size() == 1 && open_.back()->is_object() && array) {
            section_ = Section::Other;
            if (key_ == "stacks" || key_ == "locks") {
                const bool isStacks = key_ == "stacks";
                bool& done = isStacks ? streamed_.stacks : streamed_.locks;
                bool& seen = isStacks ? seenStacks_ : seenLocks_;
                if (seen) // a second "stacks" member: refuse rather than guess which one counts
                    fail(kRoot / (isStacks ? "stacks" : "locks"), "appears twice in the document");
                seen = true;
                // Locks are only converted when every stack is known, for their references.
                if (formatOk_ && versionOk_ && (isStacks || stacksClosed_)) {
                    section_ = isStacks ? Section::Stacks : Section::Locks;
                    done = true;
                    converted_ = 0;
                }
            }
        }
        open_.push_back(place(std::move(container)));
        return true;
    }

    bool close()
    {
        open_.pop_back();
        if (open_.size() == 2 && section_ != Section::Other) {
            convertLast();
        } else if (open_.size() == 1) {
            if (section_ == Section::Stacks)
                stacksClosed_ = true;
            section_ = Section::Other;
        }
        return true;
    }

    const size_t maxDepth_;
    Streamed& streamed_;
    json root_;
    std::vector<json*> open_;
    std::string key_;
    bool formatOk_ = false;
    bool versionOk_ = false;
    bool stacksClosed_ = false;
    bool seenStacks_ = false;
    bool seenLocks_ = false;
    Section section_ = Section::Other;
    size_t converted_ = 0;
};

} // namespace

Capture fromJson(const nlohmann::json& doc)
{
    Streamed none;
    return captureFromJson(doc, none);
}

Capture parseCapture(std::string_view text, const ReadLimits& limits)
{
    if (text.size() > limits.max_file_bytes)
        throw CaptureError("input is " + std::to_string(text.size()) + " bytes, larger than the limit of "
            + std::to_string(limits.max_file_bytes) + " bytes");
    bool blank = true;
    for (char ch : text)
        if (ch != ' ' && ch != '\t' && ch != '\n' && ch != '\r') {
            blank = false;
            break;
        }
    if (blank)
        throw CaptureError("empty input: expected a lockscope capture (JSON)");

    Streamed streamed;
    CaptureSax sax(limits.max_depth, streamed);
    try {
        json::sax_parse(text.begin(), text.end(), &sax, json::input_format_t::json, /*strict=*/true,
            /*ignore_comments=*/false);
    } catch (const TooDeep&) {
        throw CaptureError("JSON nested deeper than " + std::to_string(limits.max_depth)
            + " levels: not a lockscope capture (the format needs fewer than 10)");
    } catch (const json::exception& e) {
        // e.what() is "[json.exception.parse_error.N] parse error at line L, column C: detail".
        std::string what = e.what();
        const auto pos = what.find("] ");
        if (what.starts_with("[json.exception.") && pos != std::string::npos)
            what = what.substr(pos + 2);
        throw CaptureError("invalid JSON (" + printable(what, 200) + ")");
    }
    return captureFromJson(sax.root(), streamed);
}

Capture readCapture(const std::string& path, const ReadLimits& limits)
{
    const std::string where = printable(path, 4096);
    auto err = [&](const std::string& what) { return CaptureError(where + ": " + what); };

    // O_NONBLOCK so that opening a FIFO does not wait for a writer.
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
    if (fd < 0)
        throw err(std::string("cannot open: ") + errnoText(errno));
    struct Closer {
        int fd;
        ~Closer() { ::close(fd); }
    } closer { fd };
    struct stat st { };
    if (::fstat(fd, &st) != 0)
        throw err(std::string("cannot stat: ") + errnoText(errno));
    if (!S_ISREG(st.st_mode)) {
        const char* what = S_ISDIR(st.st_mode) ? "a directory"
            : S_ISFIFO(st.st_mode)             ? "a FIFO"
            : S_ISCHR(st.st_mode)              ? "a character device"
            : S_ISBLK(st.st_mode)              ? "a block device"
            : S_ISSOCK(st.st_mode)             ? "a socket"
                                               : "not a regular file";
        throw err(std::string("is ") + what + ", expected a capture file (*.lockscope.json)");
    }
    const auto size = static_cast<uint64_t>(st.st_size);
    if (size > limits.max_file_bytes)
        throw err("file is " + std::to_string(size) + " bytes, larger than the limit of "
            + std::to_string(limits.max_file_bytes) + " bytes");
    if (size == 0)
        throw err("empty file: expected a lockscope capture (JSON)");

    std::string text;
    text.resize(static_cast<size_t>(size));
    size_t got = 0;
    while (got < text.size()) {
        const ssize_t n = ::read(fd, text.data() + got, text.size() - got);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            throw err(std::string("read error: ") + errnoText(errno));
        }
        if (n == 0)
            break; // shrank while reading: parse what is there, it will say if it is cut
        got += static_cast<size_t>(n);
    }
    text.resize(got);
    try {
        return parseCapture(text, limits);
    } catch (const CaptureError& e) {
        throw err(e.what());
    }
}

namespace {

bool isScalar(const nlohmann::ordered_json& v)
{
    return !v.is_structured();
}

bool inlineable(const nlohmann::ordered_json& v)
{
    if (v.empty())
        return true;
    if (v.is_array())
        return std::all_of(v.begin(), v.end(), isScalar);
    // Small flat objects (frames, probe statuses, leaves) read best as one line.
    return v.size() <= 6 && std::all_of(v.begin(), v.end(), isScalar);
}

std::string scalarText(const nlohmann::ordered_json& v)
{
    return v.dump(-1, ' ', false, json::error_handler_t::replace);
}

// Like dump(2) but keeps arrays of numbers (the 64 histogram buckets) and
// flat objects on one line, so that a capture stays reviewable in a diff.
void prettyPrint(const nlohmann::ordered_json& v, std::string& out, unsigned indent)
{
    if (!v.is_structured()) {
        out += scalarText(v);
        return;
    }
    const bool obj = v.is_object();
    if (inlineable(v)) {
        out += obj ? '{' : '[';
        bool first = true;
        for (auto it = v.begin(); it != v.end(); ++it) {
            if (!first)
                out += ", ";
            first = false;
            if (obj) {
                out += scalarText(nlohmann::ordered_json(it.key()));
                out += ": ";
            }
            out += scalarText(it.value());
        }
        out += obj ? '}' : ']';
        return;
    }
    const std::string pad(indent + 2, ' ');
    out += obj ? "{\n" : "[\n";
    bool first = true;
    for (auto it = v.begin(); it != v.end(); ++it) {
        if (!first)
            out += ",\n";
        first = false;
        out += pad;
        if (obj) {
            out += scalarText(nlohmann::ordered_json(it.key()));
            out += ": ";
        }
        prettyPrint(it.value(), out, indent + 2);
    }
    out += '\n';
    out.append(indent, ' ');
    out += obj ? '}' : ']';
}

// The document text without ever holding the DOM of stacks and locks: the
// small sections go through one ordered_json, the big arrays element by element.
std::string serialize(const Capture& c, bool pretty)
{
    using OJ = nlohmann::ordered_json;
    const OJ doc = buildJson<OJ>(c, false);
    std::string out = pretty ? "{\n" : "{";
    bool first = true;
    auto element = [&](const OJ& e) {
        if (pretty) {
            out += "\n    ";
            prettyPrint(e, out, 4);
        } else {
            out += e.dump(-1, ' ', false, json::error_handler_t::replace);
        }
    };
    for (auto it = doc.begin(); it != doc.end(); ++it) {
        if (!first)
            out += pretty ? ",\n" : ",";
        first = false;
        if (pretty)
            out += "  ";
        out += scalarText(OJ(it.key()));
        out += pretty ? ": " : ":";
        const bool isStacks = it.key() == "stacks";
        if (isStacks || it.key() == "locks") {
            const size_t n = isStacks ? c.stacks.size() : c.locks.size();
            out += '[';
            for (size_t i = 0; i < n; ++i) {
                if (i)
                    out += ',';
                element(isStacks ? stackToJson<OJ>(c.stacks[i]) : lockToJson<OJ>(c.locks[i]));
            }
            if (pretty && n)
                out += "\n  ";
            out += ']';
        } else if (pretty) {
            prettyPrint(it.value(), out, 2);
        } else {
            out += it.value().dump(-1, ' ', false, json::error_handler_t::replace);
        }
    }
    out += pretty ? "\n}" : "}";
    return out;
}

} // namespace

void writeCapture(const Capture& capture, OutputFile& out, bool pretty)
{
    std::string text;
    try {
        text = serialize(capture, pretty);
    } catch (const json::exception& e) {
        throw CaptureError(printable(out.path(), 4096) + ": cannot serialize the capture: " + e.what());
    }
    text += '\n';
    out.commit(text);
}

void writeCapture(const Capture& capture, const std::string& path, bool pretty)
{
    OutputFile out(path, 0600);
    writeCapture(capture, out, pretty);
}

} // namespace lockscope
