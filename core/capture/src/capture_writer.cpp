// SPDX-License-Identifier: GPL-2.0-or-later
// Capture -> JSON: the document toJson() returns and the text writeCapture()
// puts in a file (docs/capture-format.md).
#include "capture_writer.h"

#include <vector>

#include <nlohmann/json.hpp>

#include "capture_encoding.h"
#include "histogram_json.h"
#include "json_access.h"
#include "lockscope/capture/io.h"
#include "pretty_json.h"
#include "stats_json.h"

namespace lockscope {
namespace detail {
namespace {

// Built as ordered_json by the writer so that files read top-down (format and
// version first); toJson() returns the plain json type of the API.
template <class J> J frameToJson(const Frame& f)
{
    J j { { "function", f.function }, { "offset", f.offset }, { "module", f.module } };
    if (f.address)
        j["address"] = hexAddress(*f.address);
    return j;
}

// The layout being written; symbols is filled before any stack is written.
struct Encoder {
    bool compact = false;
    SymbolTable symbols;
};

template <class J> J latencyToJson(const LatencyEntry& e, const Encoder& enc)
{
    J j { { "name", e.name }, { "latency", histToJson<J>(e.latency, enc.compact) }, { "errors", e.errors } };
    if (e.sample_period != 1) {
        j["sample_period"] = e.sample_period;
        j["calls"] = e.all_calls;
    }
    return j;
}

template <class J> J stackToJson(const Stack& st, Encoder& enc)
{
    J frames = J::array();
    for (const auto& f : st.frames) {
        if (enc.compact) {
            frames.push_back(enc.symbols.idOf(f));
            frames.push_back(f.offset);
        } else {
            frames.push_back(frameToJson<J>(f));
        }
    }
    return J { { "id", st.id }, { "kind", toString(st.kind) }, { "frames", std::move(frames) } };
}

template <class J> J lockToJson(const Lock& l, const Encoder& enc)
{
    J sites = J::array();
    for (const auto& site : l.sites) {
        J js { { "stack_id", site.stack_id }, { "wait", histToJson<J>(site.wait, enc.compact) },
            { "hold", histToJson<J>(site.hold, enc.compact) } };
        if (site.user_stack_id)
            js["user_stack_id"] = *site.user_stack_id;
        if (!site.acquire.empty()) // absent = no acquisition timed (older captures, no --hold)
            js["acquire"] = histToJson<J>(site.acquire, enc.compact);
        if (site.wait_untimed)
            js["wait_untimed"] = site.wait_untimed;
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
    jl["wait"] = histToJson<J>(l.wait, enc.compact);
    if (l.wait_untimed)
        jl["wait_untimed"] = l.wait_untimed;
    jl["hold"] = histToJson<J>(l.hold, enc.compact);
    if (!l.acquire.empty())
        jl["acquire"] = histToJson<J>(l.acquire, enc.compact);
    jl["sites"] = std::move(sites);
    return jl;
}

template <class J> J metaToJson(const Meta& m)
{
    J filters = J::object();
    for (const auto& [k, v] : m.filters)
        filters[k] = v;
    J j { { "tool_version", m.tool_version }, { "label", m.label }, { "kernel_release", m.kernel_release },
        { "kernel_version", m.kernel_version }, { "kernel_build_id", m.kernel_build_id },
        { "hostname", m.hostname }, { "cpu_model", m.cpu_model }, { "cpu_count", m.cpu_count },
        { "start_time", m.start_time }, { "duration_s", m.duration_s }, { "command", m.command },
        { "filters", std::move(filters) } };
    if (!m.syscall_timing_skipped.empty()) // absent = timed (or --no-syscalls), as before
        j["syscall_timing_skipped"] = m.syscall_timing_skipped;
    if (const Virtualization& v = m.virtualization; !v.kind.empty()) { // absent = not recorded (older captures)
        J jv { { "kind", v.kind }, { "hypervisor", v.hypervisor }, { "detected_by", v.detected_by } };
        if (v.vcpus)
            jv["vcpus"] = v.vcpus;
        if (v.host_cores)
            jv["host_cores"] = v.host_cores;
        if (v.host_load)
            jv["host_load"] = *v.host_load;
        j["virtualization"] = std::move(jv);
    }
    return j;
}

template <class J> J cpuToJson(const CpuProfile& cpu)
{
    J leaves = J::array();
    for (const auto& l : cpu.top_leaves)
        leaves.push_back(J { { "function", l.function }, { "module", l.module }, { "samples", l.samples } });
    J cpuStacks = J::array();
    for (const auto& sc : cpu.stacks)
        cpuStacks.push_back(J { { "stack_id", sc.stack_id }, { "count", sc.count } });
    J j { { "frequency_hz", cpu.frequency_hz }, { "samples", cpu.samples },
        { "lock_samples", cpu.lock_samples }, { "idle_samples", cpu.idle_samples },
        { "top_leaves", std::move(leaves) }, { "stacks", std::move(cpuStacks) } };
    if (cpu.bpf_samples) // counted, 0 included; absent: not counted
        j["bpf_samples"] = *cpu.bpf_samples;
    return j;
}

template <class J> J workloadToJson(const Workload& wl)
{
    J w { { "command", wl.command } };
    if (wl.exit_status)
        w["exit_status"] = *wl.exit_status;
    if (wl.signal)
        w["signal"] = *wl.signal;
    w["results"] = wl.results;
    return w;
}

// Each element through convert: the stacks, locks and latency lists.
template <class J, class T, class F> J arrayToJson(const std::vector<T>& items, F convert)
{
    J out = J::array();
    for (const auto& item : items)
        out.push_back(convert(item));
    return out;
}

// Numbers every symbol the stacks use, in the order they first occur.
void collectSymbols(const Capture& c, Encoder& enc)
{
    for (const Stack& st : c.stacks)
        for (const Frame& f : st.frames)
            enc.symbols.idOf(f);
}

template <class J> J symbolsToJson(const std::vector<Symbol>& symbols)
{
    J out = J::array();
    for (const Symbol& s : symbols) {
        J j { { "function", s.function }, { "module", s.module } };
        if (s.base)
            j["address"] = hexAddress(*s.base);
        out.push_back(std::move(j));
    }
    return out;
}

// withBig = false leaves "stacks" and "locks" empty: serializeCapture()
// streams those two (the bulk of a capture) element by element.
template <class J> J buildJson(const Capture& c, bool withBig, Encoder& enc)
{
    if (enc.compact)
        collectSymbols(c, enc);
    J doc = J::object();
    doc["format"] = kCaptureFormat;
    doc["version"] = enc.compact ? kCaptureVersionCompact : kCaptureVersion;
    doc["meta"] = metaToJson<J>(c.meta);
    J probes = J::array();
    for (const auto& p : c.probes)
        probes.push_back(J { { "name", p.name }, { "target", p.target }, { "hook", p.hook },
            { "attached", p.attached }, { "reason", p.reason } });
    doc["probes"] = std::move(probes);
    doc["stats"] = statsToJson<J>(c.stats);
    if (enc.compact)
        doc["symbols"] = symbolsToJson<J>(enc.symbols.symbols());
    auto stack = [&](const Stack& st) { return stackToJson<J>(st, enc); };
    auto lock = [&](const Lock& l) { return lockToJson<J>(l, enc); };
    auto latency = [&](const LatencyEntry& e) { return latencyToJson<J>(e, enc); };
    doc["stacks"] = withBig ? arrayToJson<J>(c.stacks, stack) : J::array();
    doc["locks"] = withBig ? arrayToJson<J>(c.locks, lock) : J::array();
    doc["syscalls"] = arrayToJson<J>(c.syscalls, latency);
    doc["functions"] = arrayToJson<J>(c.functions, latency);
    doc["cpu"] = cpuToJson<J>(c.cpu);
    doc["workload"] = workloadToJson<J>(c.workload);
    return doc;
}

} // namespace

// The document text without ever holding the DOM of stacks and locks: the
// small sections go through one ordered_json, the big arrays element by
// element, handed to sink about a MiB at a time.
void serializeCapture(const Capture& c, bool pretty, bool compact, const util::TextSink& sink)
{
    using OJ = nlohmann::ordered_json;
    constexpr size_t kPiece = size_t { 1 } << 20;
    Encoder enc;
    enc.compact = compact;
    const OJ doc = buildJson<OJ>(c, false, enc);
    std::string out = pretty ? "{\n" : "{";
    auto flushIfFull = [&] {
        if (out.size() >= kPiece) {
            sink(out);
            out.clear();
        }
    };
    bool first = true;
    auto element = [&](const OJ& e) {
        if (pretty) {
            out += "\n    ";
            prettyPrint(e, out, 4);
        } else {
            out += e.dump(-1, ' ', false, json::error_handler_t::replace);
        }
        flushIfFull();
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
                element(isStacks ? stackToJson<OJ>(c.stacks[i], enc) : lockToJson<OJ>(c.locks[i], enc));
            }
            if (pretty && n)
                out += "\n  ";
            out += ']';
        } else if (pretty) {
            prettyPrint(it.value(), out, 2);
        } else {
            out += it.value().dump(-1, ' ', false, json::error_handler_t::replace);
        }
        flushIfFull();
    }
    out += pretty ? "\n}" : "}";
    sink(out);
}

std::string serializeCapture(const Capture& c, bool pretty, bool compact)
{
    std::string text;
    serializeCapture(c, pretty, compact, [&](std::string_view piece) { text += piece; });
    return text;
}

} // namespace detail

nlohmann::json toJson(const Capture& c)
{
    return toJson(c, CaptureLayout::Full);
}

nlohmann::json toJson(const Capture& c, CaptureLayout layout)
{
    detail::Encoder enc;
    enc.compact = layout == CaptureLayout::Compact;
    return detail::buildJson<nlohmann::json>(c, true, enc);
}

} // namespace lockscope
