// SPDX-License-Identifier: GPL-2.0-or-later
#include "test_support.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <sys/wait.h>

#include <nlohmann/json.hpp>

#include "sample_capture.h"

namespace lockscope::reports::test {

std::string fixture(const std::string& name) { return std::string(LOCKSCOPE_CAPTURE_FIXTURES) + "/" + name; }
std::string testdata(const std::string& name) { return std::string(LOCKSCOPE_REPORTS_TESTDATA) + "/" + name; }

std::string artifactDir()
{
    std::filesystem::create_directories(LOCKSCOPE_REPORTS_ARTIFACTS);
    return LOCKSCOPE_REPORTS_ARTIFACTS;
}

std::string readFile(const std::string& path)
{
    std::ifstream in(path, std::ios::binary);
    std::ostringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

void writeFile(const std::string& path, const std::string& text)
{
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out << text;
}

Lock makeLock(const std::string& key, uint32_t stack, uint64_t n, uint64_t wait_ns, uint64_t seed)
{
    Lock l;
    l.key = key;
    l.type = "spinlock";
    LockSite site;
    site.stack_id = stack;
    // Independent draws from a log-normal-ish distribution around wait_ns, so
    // two locks with the same parameters differ by sampling noise only.
    testing::Rng rng(seed);
    for (uint64_t i = 0; i < n; ++i) {
        double z = -2.0;
        for (int k = 0; k < 4; ++k)
            z += double(rng.below(1u << 20)) / double(1u << 20);
        site.wait.add(uint64_t(double(wait_ns) * std::exp2(z)));
    }
    l.wait = site.wait;
    l.sites.push_back(site);
    return l;
}

const LockDelta& findLock(const Comparison& c, const std::string& key)
{
    for (const auto& l : c.locks)
        if (l.key == key)
            return l;
    throw std::runtime_error("no lock " + key);
}

Stack makeStack(uint32_t id, std::initializer_list<const char*> frames, uint64_t offsetBase)
{
    Stack s;
    s.id = id;
    uint64_t off = offsetBase;
    for (const char* f : frames)
        s.frames.push_back(Frame{f, off += 0x10, "", 0xffffffff81000000ull + off});
    return s;
}

Capture notUtf8Capture()
{
    Capture c;
    c.meta.label = "label\xff";
    c.meta.cpu_count = 1;
    c.meta.duration_s = 1;
    c.stacks.push_back(makeStack(1, {"caller\xc3", "outer"}));
    c.stacks.back().frames.at(1).module = "/bin/w\xfe\xfe";
    c.stacks.push_back(makeStack(2, {"holder\xe2\x82", "holder_outer"}));
    Lock l = makeLock("spinlock@caller\xc3", 1, 20, 1000);
    l.type = "mutex";
    l.name = "&cache\xff";
    l.cgroup = "/sys/fs/cgroup/c\x80g";
    l.sites.at(0).holders = {Holder{2, 20, l.wait.total(), 42, "ls-\xffowner"}};
    c.locks.push_back(l);
    return c;
}

int run(const std::string& cmd, std::string* out)
{
    FILE* p = ::popen(("{ " + cmd + "; } 2>&1").c_str(), "r");
    if (!p)
        return -1;
    char buf[4096];
    size_t n;
    while ((n = std::fread(buf, 1, sizeof buf, p)) > 0)
        if (out)
            out->append(buf, n);
    const int st = ::pclose(p);
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

namespace {

std::string scalarText(const nlohmann::json& v)
{
    return v.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

void layout(const nlohmann::json& v, unsigned indent, std::string& out)
{
    if (!v.is_structured()) {
        out += scalarText(v);
        return;
    }
    const bool obj = v.is_object();
    const bool oneLine = std::none_of(v.begin(), v.end(), [](const nlohmann::json& e) { return e.is_structured(); });
    const std::string pad = oneLine ? std::string() : "\n" + std::string(indent + 2, ' ');
    out += obj ? '{' : '[';
    for (auto it = v.begin(); it != v.end(); ++it) {
        if (it != v.begin())
            out += oneLine ? ", " : ",";
        out += pad;
        if (obj)
            out += scalarText(it.key()) + ": ";
        layout(it.value(), indent + 2, out);
    }
    if (!oneLine)
        out += "\n" + std::string(indent, ' ');
    out += obj ? '}' : ']';
}

} // namespace

std::string jsonLayout(const nlohmann::json& v)
{
    std::string out;
    layout(v, 0, out);
    return out;
}

std::string checkGolden(const std::string& name, const std::string& actual)
{
    const std::string path = testdata("golden/" + name);
    if (const char* u = std::getenv("LOCKSCOPE_UPDATE_GOLDEN"); u && std::string(u) == "1") {
        writeFile(path, actual);
        return "";
    }
    const std::string expected = readFile(path);
    if (expected == actual)
        return "";
    const std::string actualPath = path + ".actual";
    writeFile(actualPath, actual);
    std::string diff;
    run("diff -u '" + path + "' '" + actualPath + "' | head -60", &diff);
    return "golden mismatch for " + name + " (wrote " + actualPath +
           "; LOCKSCOPE_UPDATE_GOLDEN=1 regenerates):\n" + diff;
}

} // namespace lockscope::reports::test
