// SPDX-License-Identifier: GPL-2.0-or-later
// The capture file format (docs/capture-format.md), read: one converter per
// section, then the document with its duplicate and cross-reference checks.
#include "capture_reader.h"

#include <algorithm>
#include <cctype>
#include <utility>

#include "histogram_json.h"
#include "stats_json.h"
#include "lockscope/util/error_text.h"

namespace lockscope {
namespace detail {

using util::printable;

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

namespace {

// Written since captures say where they were recorded (absent before).
Virtualization virtualizationFromJson(const json& j, const Path& at)
{
    Virtualization v;
    v.kind = nonEmptyStrAt(j, at, "kind");
    static const char* const kinds[] = {"none", "kvm", "tcg", "tcg-multi", "vm"};
    if (std::find(std::begin(kinds), std::end(kinds), v.kind) == std::end(kinds))
        fail(at / "kind", "expected none, kvm, tcg, tcg-multi or vm, got \"" + printable(v.kind) + "\"");
    v.hypervisor = strAt(j, at, "hypervisor");
    v.detected_by = strAt(j, at, "detected_by");
    if (optionalMember(j, "vcpus"))
        v.vcpus = u32At(j, at, "vcpus");
    if (optionalMember(j, "host_cores"))
        v.host_cores = u32At(j, at, "host_cores");
    if (optionalMember(j, "host_load"))
        v.host_load = nonNegativeDoubleAt(j, at, "host_load");
    return v;
}

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
    if (optionalMember(j, "virtualization"))
        m.virtualization = virtualizationFromJson(objectAt(j, at, "virtualization"), at / "virtualization");
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

// A frame must say where it is: by name, or by address when unresolved.
void checkFrame(const Frame& fr, const Path& at)
{
    if (fr.function.empty() && !fr.address)
        fail(at, "an unresolved frame (function \"\") needs its address");
}

// Version 1: each frame an object.
std::vector<Frame> fullFrames(const json& frames, const Path& fp)
{
    std::vector<Frame> out;
    out.reserve(frames.size());
    for (size_t i = 0; i < frames.size(); ++i) {
        const json& f = expectObject(frames[i], fp[i]);
        const Path p = fp[i];
        Frame fr;
        fr.function = strAt(f, p, "function");
        fr.offset = u64At(f, p, "offset");
        fr.module = strAt(f, p, "module");
        fr.address = optionalAddressAt(f, p, "address");
        checkFrame(fr, p);
        out.push_back(std::move(fr));
    }
    return out;
}

// Compact layout: [symbol, offset, symbol, offset, ...], the address being
// the symbol's base + offset.
std::vector<Frame> compactFrames(const json& frames, const Path& fp, const Encoding& enc)
{
    if (frames.size() % 2 != 0)
        fail(fp, "expected [symbol, offset] pairs, got " + std::to_string(frames.size()) + " integers");
    std::vector<Frame> out;
    out.reserve(frames.size() / 2);
    for (size_t i = 0; i < frames.size(); i += 2) {
        const uint64_t id = toU64(frames[i], fp[i]);
        if (id >= enc.symbols.size())
            fail(fp[i],
                "no symbol " + std::to_string(id) + " in symbols (" + std::to_string(enc.symbols.size())
                    + " entries)");
        const Symbol& sym = enc.symbols[id];
        Frame fr;
        fr.function = sym.function;
        fr.offset = toU64(frames[i + 1], fp[i + 1]);
        fr.module = sym.module;
        if (sym.base)
            fr.address = *sym.base + fr.offset;
        checkFrame(fr, fp[i]);
        out.push_back(std::move(fr));
    }
    return out;
}

Stack stackFromJson(const json& j, const Path& at, const Encoding& enc)
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
    s.frames = enc.compact ? compactFrames(frames, fp, enc) : fullFrames(frames, fp);
    return s;
}

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

// Waits of wait whose time is estimated (absent: none, as before the field).
uint64_t untimedAt(const json& j, const Path& at, const Log2Hist& wait)
{
    if (!optionalMember(j, "wait_untimed"))
        return 0;
    const uint64_t n = u64At(j, at, "wait_untimed");
    if (n > wait.count())
        fail(at / "wait_untimed", "more than the waits counted (" + std::to_string(wait.count()) + ")");
    return n;
}

Lock lockFromJson(const json& j, const Path& at, const StackRefs& refs, const Encoding& enc)
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
    l.wait = histFromJson(member(j, at, "wait"), at / "wait", enc);
    l.wait_untimed = untimedAt(j, at, l.wait);
    l.hold = histFromJson(member(j, at, "hold"), at / "hold", enc);
    if (optionalMember(j, "acquire")) // record --hold, since acquisitions are timed
        l.acquire = histFromJson(member(j, at, "acquire"), at / "acquire", enc);
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
        site.wait = histFromJson(member(s, p, "wait"), p / "wait", enc);
        site.wait_untimed = untimedAt(s, p, site.wait);
        site.hold = histFromJson(member(s, p, "hold"), p / "hold", enc);
        if (optionalMember(s, "acquire"))
            site.acquire = histFromJson(member(s, p, "acquire"), p / "acquire", enc);
        if (optionalMember(s, "holders"))
            site.holders = holdersFromJson(arrayAt(s, p, "holders"), p / "holders", refs);
        l.sites.push_back(std::move(site));
    }
    return l;
}

std::vector<LatencyEntry> latenciesFromJson(const json& arr, const Path& at, const Encoding& enc)
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
        e.latency = histFromJson(member(j, p, "latency"), p / "latency", enc);
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
    if (j.contains("bpf_samples")) {
        const uint64_t bpf = u64At(j, at, "bpf_samples");
        if (bpf > c.samples)
            fail(at / "bpf_samples",
                std::to_string(bpf) + " exceeds samples (" + std::to_string(c.samples) + ")");
        c.bpf_samples = bpf;
    }
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

int checkFormatAndVersion(const json& doc)
{
    const Path& root = kRoot;
    const json* format = optionalMember(doc, "format");
    const json* version = optionalMember(doc, "version");
    const std::string foundFormat = format && format->is_string() ? format->get<std::string>() : std::string();
    std::string foundVersion;
    if (doc.contains("version"))
        foundVersion = doc.at("version").is_number() ? doc.at("version").dump() : describe(doc.at("version"));
    auto mismatch = [&](const std::string& what) { return CaptureVersionError(what, foundFormat, foundVersion); };
    auto failAt = [&](const char* name, const std::string& problem) {
        return mismatch((root / name).str() + ": " + problem);
    };

    if (!doc.contains("format"))
        throw failAt("format", "missing (required field)");
    if (foundFormat != kCaptureFormat)
        throw failAt("format",
            std::string("expected \"") + kCaptureFormat + "\", got " + describe(doc.at("format"))
                + ": not a lockscope capture");
    if (!doc.contains("version"))
        throw failAt("version", "missing (required field)");
    if (!version || !version->is_number_integer())
        throw failAt("version", "expected an integer format version, got " + describe(doc.at("version")));
    const bool newer = version->is_number_unsigned()
        ? version->get<uint64_t>() > static_cast<uint64_t>(kCaptureVersionNewest)
        : version->get<int64_t>() > kCaptureVersionNewest;
    if (newer)
        throw mismatch("format version " + describe(*version) + " is newer than this lockscope reads ("
            + std::to_string(kCaptureVersionNewest) + "): upgrade lockscope");
    const int64_t v = version->get<int64_t>();
    if (v != kCaptureVersion && v != kCaptureVersionCompact)
        throw failAt("version",
            "format version " + describe(*version) + " is not valid (this lockscope reads "
                + std::to_string(kCaptureVersion) + " to " + std::to_string(kCaptureVersionNewest) + ")");
    return static_cast<int>(v);
}

void Streamed::addStack(const json& j, size_t i)
{
    const Path at = kRoot / "stacks";
    stackList.push_back(stackFromJson(j, at[i], enc));
    const Stack& st = stackList.back();
    auto [it, fresh] = stackAt.emplace(st.id, i);
    if (!fresh)
        fail(at[i] / "id",
            "duplicate stack id " + std::to_string(st.id) + " (also at stacks["
                + std::to_string(it->second) + "])");
    refs.kinds.emplace(st.id, st.kind);
}

void Streamed::addLock(const json& j, size_t i)
{
    const Path at = kRoot / "locks";
    lockList.push_back(lockFromJson(j, at[i], refs, enc));
    auto [it, fresh] = lockAt.emplace(lockList.back().key, i);
    if (!fresh)
        fail(at[i] / "key",
            "duplicate lock key \"" + printable(lockList.back().key) + "\" (also at locks["
                + std::to_string(it->second) + "])");
}

Capture captureFromJson(const json& doc, Streamed& streamed)
{
    const Path& root = kRoot;
    if (!doc.is_object())
        fail(root, "expected a lockscope capture (a JSON object), got " + describe(doc));
    const bool compact = checkFormatAndVersion(doc) == kCaptureVersionCompact;
    streamed.enc.compact = compact;
    // Not read while parsing (symbols after stacks, or a document built in memory).
    if (compact && !streamed.symbols)
        streamed.enc.symbols = symbolsFromJson(arrayAt(doc, root, "symbols"), root / "symbols");

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

    c.syscalls = latenciesFromJson(member(doc, root, "syscalls"), root / "syscalls", streamed.enc);
    c.functions = latenciesFromJson(member(doc, root, "functions"), root / "functions", streamed.enc);
    c.cpu = cpuFromJson(member(doc, root, "cpu"), root / "cpu", streamed.refs);
    c.workload = workloadFromJson(member(doc, root, "workload"), root / "workload");
    c.stacks = std::move(streamed.stackList);
    c.locks = std::move(streamed.lockList);
    return c;
}

} // namespace detail

Capture fromJson(const nlohmann::json& doc)
{
    detail::Streamed none;
    return detail::captureFromJson(doc, none);
}

} // namespace lockscope
