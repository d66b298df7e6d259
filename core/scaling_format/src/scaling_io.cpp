// SPDX-License-Identifier: GPL-2.0-or-later
#include "lockscope/scaling_format/scaling_io.h"

#include <cmath>
#include <fstream>
#include <sstream>

#include "lockscope/capture/io.h"
#include "lockscope/util/output_file.h"

namespace lockscope::scaling {

using nlohmann::json;

const ScalingPoint* ScalingVariant::at(unsigned threads) const
{
    for (const auto& p : points)
        if (p.threads == threads)
            return &p;
    return nullptr;
}

const ScalingVariant* ScalingPair::variant(std::string_view name) const
{
    for (const auto& v : variants)
        if (v.name == name)
            return &v;
    return nullptr;
}

std::optional<double> ScalingPair::speedup(unsigned threads) const
{
    const auto* b = variant("before");
    const auto* a = variant("after");
    if (!b || !a)
        return std::nullopt;
    const auto* pb = b->at(threads);
    const auto* pa = a->at(threads);
    if (!pb || !pa || pb->ops_per_sec <= 0)
        return std::nullopt;
    return pa->ops_per_sec / pb->ops_per_sec;
}

const ScalingPair* ScalingRun::pair(std::string_view id) const
{
    for (const auto& p : pairs)
        if (p.id == id)
            return &p;
    return nullptr;
}

namespace {

// ------------------------------------------------------------ writing ---

json histJson(const Log2Hist& h)
{
    json buckets = json::array();
    for (uint64_t b : h.buckets())
        buckets.push_back(b);
    return {{"count", h.count()}, {"total_ns", h.total()}, {"min_ns", h.min()}, {"max_ns", h.max()},
            {"hist", std::move(buckets)}};
}

// ------------------------------------------------------------ reading ---

std::string describe(const json& j)
{
    std::string s = j.dump();
    if (s.size() > 40)
        s = s.substr(0, 37) + "...";
    return s;
}

[[noreturn]] void fail(const std::string& at, const std::string& problem)
{
    throw ScalingError((at.empty() ? std::string("(top level)") : at) + ": " + problem);
}

std::string key(const std::string& at, const char* name)
{
    return at.empty() ? name : at + "." + name;
}
std::string index(const std::string& at, size_t i)
{
    return at + "[" + std::to_string(i) + "]";
}

const json& member(const json& obj, const std::string& at, const char* name)
{
    if (!obj.is_object())
        fail(at, "expected an object, got " + describe(obj));
    auto it = obj.find(name);
    if (it == obj.end())
        fail(key(at, name), "missing");
    return *it;
}

std::string str(const json& obj, const std::string& at, const char* name)
{
    const json& j = member(obj, at, name);
    if (!j.is_string())
        fail(key(at, name), "expected a string, got " + describe(j));
    return j.get<std::string>();
}

uint64_t u64(const json& j, const std::string& at)
{
    if (!j.is_number_unsigned() && !(j.is_number_integer() && j.get<int64_t>() >= 0))
        fail(at, "expected an unsigned integer, got " + describe(j));
    return j.get<uint64_t>();
}

uint64_t u64(const json& obj, const std::string& at, const char* name)
{
    return u64(member(obj, at, name), key(at, name));
}

double nonNegative(const json& obj, const std::string& at, const char* name)
{
    const json& j = member(obj, at, name);
    if (!j.is_number() || !std::isfinite(j.get<double>()) || j.get<double>() < 0)
        fail(key(at, name), "expected a non-negative number, got " + describe(j));
    return j.get<double>();
}

const json& array(const json& obj, const std::string& at, const char* name)
{
    const json& j = member(obj, at, name);
    if (!j.is_array())
        fail(key(at, name), "expected an array, got " + describe(j));
    return j;
}

Log2Hist histFrom(const json& obj, const std::string& at)
{
    const json& h = array(obj, at, "hist");
    if (h.size() != Log2Hist::kBuckets)
        fail(key(at, "hist"), "expected 64 integers, got " + std::to_string(h.size()));
    std::array<uint64_t, Log2Hist::kBuckets> b{};
    for (unsigned i = 0; i < Log2Hist::kBuckets; ++i)
        b[i] = u64(h[i], index(key(at, "hist"), i));
    Log2Hist out = Log2Hist::fromParts(b, u64(obj, at, "count"), u64(obj, at, "total_ns"), u64(obj, at, "min_ns"),
                                       u64(obj, at, "max_ns"));
    if (!out.consistent())
        fail(at, "inconsistent histogram (bucket counts, count, min_ns and max_ns disagree)");
    return out;
}

unsigned threadsOf(const json& obj, const std::string& at)
{
    uint64_t t = u64(obj, at, "threads");
    if (t == 0 || t > 1u << 20)
        fail(key(at, "threads"), "expected 1..1048576, got " + std::to_string(t));
    return static_cast<unsigned>(t);
}

} // namespace

json toJson(const ScalingRun& run)
{
    json pairs = json::array();
    for (const auto& p : run.pairs) {
        json variants = json::array();
        for (const auto& v : p.variants) {
            json points = json::array();
            for (const auto& pt : v.points) {
                json locks = json::array();
                for (const auto& l : pt.locks)
                    locks.push_back(
                        {{"name", l.name}, {"type", l.type}, {"wait", histJson(l.wait)}, {"hold", histJson(l.hold)}});
                points.push_back({{"threads", pt.threads},
                                  {"ops", pt.ops},
                                  {"duration_s", pt.duration_s},
                                  {"ops_per_sec", pt.ops_per_sec},
                                  {"locks", std::move(locks)}});
            }
            variants.push_back({{"name", v.name}, {"description", v.description}, {"points", std::move(points)}});
        }
        pairs.push_back({{"id", p.id},
                         {"title", p.title},
                         {"kernel_change", p.kernel_change},
                         {"workload", p.workload},
                         {"variants", std::move(variants)}});
    }
    const auto& m = run.meta;
    return {{"format", kScalingFormat},
            {"version", kScalingVersion},
            {"meta",
             {{"tool_version", m.tool_version},
              {"created", m.created},
              {"hostname", m.hostname},
              {"kernel_release", m.kernel_release},
              {"cpu_model", m.cpu_model},
              {"cpus", m.cpus},
              {"duration_per_point_s", m.duration_per_point_s},
              {"thread_counts", m.thread_counts},
              {"command", m.command}}},
            {"pairs", std::move(pairs)}};
}

ScalingRun scalingFromJson(const json& doc)
{
    if (!doc.is_object())
        fail("", "expected a JSON object, got " + describe(doc));
    if (str(doc, "", "format") != kScalingFormat)
        fail("format", "expected \"lockscope-scaling\", got " + describe(doc["format"]) +
                           " (is this a capture? open it with `lockscope report`)");
    uint64_t version = u64(doc, "", "version");
    if (version != static_cast<uint64_t>(kScalingVersion))
        fail("version", "unsupported version " + std::to_string(version) + " (this build reads version 1)");

    ScalingRun run;
    const json& m = member(doc, "", "meta");
    run.meta.tool_version = str(m, "meta", "tool_version");
    run.meta.created = str(m, "meta", "created");
    run.meta.hostname = str(m, "meta", "hostname");
    run.meta.kernel_release = str(m, "meta", "kernel_release");
    run.meta.cpu_model = str(m, "meta", "cpu_model");
    run.meta.cpus = static_cast<unsigned>(std::min<uint64_t>(u64(m, "meta", "cpus"), 1u << 20));
    run.meta.duration_per_point_s = nonNegative(m, "meta", "duration_per_point_s");
    const json& tc = array(m, "meta", "thread_counts");
    for (size_t i = 0; i < tc.size(); ++i)
        run.meta.thread_counts.push_back(static_cast<unsigned>(u64(tc[i], index("meta.thread_counts", i))));
    const json& cmd = array(m, "meta", "command");
    for (size_t i = 0; i < cmd.size(); ++i) {
        if (!cmd[i].is_string())
            fail(index("meta.command", i), "expected a string, got " + describe(cmd[i]));
        run.meta.command.push_back(cmd[i].get<std::string>());
    }

    const json& pairs = array(doc, "", "pairs");
    for (size_t pi = 0; pi < pairs.size(); ++pi) {
        const std::string pa = index("pairs", pi);
        ScalingPair p;
        p.id = str(pairs[pi], pa, "id");
        p.title = str(pairs[pi], pa, "title");
        p.kernel_change = str(pairs[pi], pa, "kernel_change");
        p.workload = str(pairs[pi], pa, "workload");
        if (run.pair(p.id))
            fail(key(pa, "id"), "duplicate pair id \"" + p.id + "\"");
        const json& variants = array(pairs[pi], pa, "variants");
        for (size_t vi = 0; vi < variants.size(); ++vi) {
            const std::string va = index(key(pa, "variants"), vi);
            ScalingVariant v;
            v.name = str(variants[vi], va, "name");
            if (v.name != "before" && v.name != "after")
                fail(key(va, "name"), "expected \"before\" or \"after\", got \"" + v.name + "\"");
            if (p.variant(v.name))
                fail(key(va, "name"), "duplicate variant \"" + v.name + "\"");
            v.description = str(variants[vi], va, "description");
            const json& points = array(variants[vi], va, "points");
            for (size_t k = 0; k < points.size(); ++k) {
                const std::string pt = index(key(va, "points"), k);
                ScalingPoint point;
                point.threads = threadsOf(points[k], pt);
                if (!v.points.empty() && point.threads <= v.points.back().threads)
                    fail(key(pt, "threads"), "thread counts must ascend");
                point.ops = u64(points[k], pt, "ops");
                point.duration_s = nonNegative(points[k], pt, "duration_s");
                point.ops_per_sec = nonNegative(points[k], pt, "ops_per_sec");
                const json& locks = array(points[k], pt, "locks");
                for (size_t li = 0; li < locks.size(); ++li) {
                    const std::string la = index(key(pt, "locks"), li);
                    ScalingLock l;
                    l.name = str(locks[li], la, "name");
                    l.type = str(locks[li], la, "type");
                    l.wait = histFrom(member(locks[li], la, "wait"), key(la, "wait"));
                    l.hold = histFrom(member(locks[li], la, "hold"), key(la, "hold"));
                    point.locks.push_back(std::move(l));
                }
                v.points.push_back(std::move(point));
            }
            p.variants.push_back(std::move(v));
        }
        run.pairs.push_back(std::move(p));
    }
    return run;
}

ScalingRun parseScaling(std::string_view text)
{
    json doc;
    try {
        doc = json::parse(text.begin(), text.end());
    } catch (const json::parse_error& e) {
        throw ScalingError(std::string("not valid JSON: ") + e.what());
    }
    return scalingFromJson(doc);
}

ScalingRun readScaling(const std::string& path)
{
    std::ifstream in(path, std::ios::binary);
    if (!in)
        throw ScalingError(path + ": cannot open (check the path and permissions)");
    std::ostringstream text;
    text << in.rdbuf();
    try {
        return parseScaling(text.str());
    } catch (const ScalingError& e) {
        throw ScalingError(path + ": " + e.what());
    }
}

void writeScaling(const ScalingRun& run, const std::string& path)
{
    try {
        util::writeFileAtomic(path, toJson(run).dump(1) + "\n", 0644);
    } catch (const util::FileError& e) {
        throw ScalingError(e.what());
    }
}

} // namespace lockscope::scaling
