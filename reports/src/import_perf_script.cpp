// SPDX-License-Identifier: GPL-2.0-or-later
#include <cmath>
#include <map>
#include <sstream>

#include "exchange_internal.h"
#include "import_common.h"
#include "lockscope/capture/lock_frames.h"
#include "lockscope/reports/report.h"

// `perf script` text of a `perf lock record` file. Each event is a header
//   comm tid [cpu] sec.usec: lock:contention_begin: 0xADDR (flags=SPIN)
// followed by callchain lines "ADDR sym+0xoff (module)" and a blank line.
// Waits are paired by (tid, lock address), as libbpf-tools klockstat pairs
// them, so nested or interleaved contention is not mis-attributed. Lock
// keys follow the recorder's rule for locks without a data symbol:
// "<type>@<first non-lock caller>".
namespace lockscope::reports::detail {

namespace {
struct Event {
    bool begin = false;
    uint64_t tid = 0;
    uint64_t ts_ns = 0;
    uint64_t lock = 0;
    std::string flags;
    int ret = 0;
    std::vector<Frame> frames;
};

std::string typeFromFlags(const std::string& flags)
{
    auto has = [&](const char* f) {
        std::stringstream ss(flags);
        std::string part;
        while (std::getline(ss, part, '|'))
            if (part == f)
                return true;
        return false;
    };
    const bool r = has("READ"), w = has("WRITE");
    const std::string rw = r ? ":R" : w ? ":W" : "";
    if (has("MUTEX"))
        return "mutex";
    if (has("RT"))
        return rw.empty() ? "rtmutex" : "rwlock-rt" + rw;
    if (has("PERCPU"))
        return "pcpu-sem" + rw;
    if (has("SPIN"))
        return rw.empty() ? "spinlock" : "rwlock" + rw;
    if (r || w)
        return "rwsem" + rw;
    return "semaphore";
}

Frame parseFrame(const std::string& line)
{
    // "ffffffff8220389b _raw_spin_lock+0x3b ([kernel.kallsyms])"
    Frame f;
    std::string s = trim(line);
    const auto sp = s.find(' ');
    f.address = parseCount(s.substr(0, sp), 16);
    std::string rest = sp == std::string::npos ? "" : trim(s.substr(sp + 1));
    const auto paren = rest.rfind(" (");
    std::string module;
    if (paren != std::string::npos && rest.back() == ')') {
        module = rest.substr(paren + 2, rest.size() - paren - 3);
        rest = rest.substr(0, paren);
    }
    if (module == "[kernel.kallsyms]" || module == "[unknown]")
        module.clear();
    else if (module.size() > 2 && module.front() == '[' && module.back() == ']')
        module = module.substr(1, module.size() - 2);  // kernel module
    f.module = module;
    if (rest != "[unknown]") {
        const auto plus = rest.rfind("+0x");
        f.function = rest.substr(0, plus);
        if (plus != std::string::npos)
            f.offset = parseCount(rest.substr(plus + 3), 16);
    }
    return f;
}

class PerfScript final : public Importer {
public:
    std::string_view name() const noexcept override { return "perf-script"; }

    Capture read(std::string_view text, const std::string& source) const override
    {
        Capture c;
        c.meta.label = "perf-script";
        c.meta.tool_version = LOCKSCOPE_VERSION;
        c.meta.command = {"perf", "lock", "record"};
        c.probes.push_back({"lock_contention", "lock:contention_begin,lock:contention_end", "tracepoint", true,
                            "imported from perf script text"});
        CaptureBuilder builder;
        std::map<std::pair<uint64_t, uint64_t>, Event> open;  // (tid, lock) -> begin
        std::istringstream in{std::string(text)};
        std::string line;
        size_t lineNo = 0, events = 0;
        uint64_t firstTs = 0, lastTs = 0;
        Event* cur = nullptr;
        Event ev;
        auto flush = [&]() {
            if (!cur)
                return;
            cur = nullptr;
            ++events;
            if (!firstTs)
                firstTs = ev.ts_ns;
            lastTs = std::max(lastTs, ev.ts_ns);
            const auto key = std::make_pair(ev.tid, ev.lock);
            if (ev.begin) {
                open[key] = ev;  // a repeated begin replaces a stale one
                return;
            }
            auto it = open.find(key);
            if (it == open.end()) {
                ++c.stats.unmatched;
                return;
            }
            const Event& b = it->second;
            const std::string type = typeFromFlags(b.flags);
            std::string caller = "unknown";
            for (const auto& f : b.frames)
                if (!f.function.empty() && !isLockInternalFrame(f.function)) {
                    caller = f.function;
                    break;
                }
            // Captures require a frame per stack; events recorded without -g have none.
            const uint32_t stack = builder.stackId(
                b.frames.empty() ? std::vector<Frame>{Frame{"[no callchain]", 0, "", std::nullopt}} : b.frames);
            const bool aborted = ev.ret < 0;
            if (aborted)
                ++c.stats.aborted_waits;
            builder.addWait(type.substr(0, type.find(':')) + "@" + caller, type, ev.lock, stack,
                            ev.ts_ns >= b.ts_ns ? ev.ts_ns - b.ts_ns : 0, aborted);
            open.erase(it);
        };
        auto fail = [&](const std::string& what) {
            throw ImportError(source + ":" + std::to_string(lineNo) + ": " + what +
                              "; expected the text of `perf script` on a `perf lock record` file");
        };
        while (std::getline(in, line)) {
            ++lineNo;
            if (line.empty() || trim(line).empty()) {
                flush();
                continue;
            }
            if (line[0] == '#') {
                auto header = [&](const char* k) {
                    const std::string p = std::string("# ") + k;
                    if (line.rfind(p, 0) != 0)
                        return std::string();
                    const auto colon = line.find(':', p.size());
                    return colon == std::string::npos ? std::string() : trim(line.substr(colon + 1));
                };
                if (auto v = header("os release"); !v.empty())
                    c.meta.kernel_release = v;
                if (auto v = header("hostname"); !v.empty())
                    c.meta.hostname = v;
                if (auto v = header("cpudesc"); !v.empty())
                    c.meta.cpu_model = v;
                if (auto v = header("nrcpus online"); !v.empty())
                    try {
                        const uint64_t n = parseCount(v);
                        if (n > 1u << 20)
                            throw std::invalid_argument("out of range: '" + v + "'");
                        c.meta.cpu_count = uint32_t(n);
                    } catch (const std::exception& e) {
                        fail(std::string("bad 'nrcpus online' header (") + e.what() + ")");
                    }
                continue;
            }
            if (line[0] == '\t' || line[0] == ' ') {
                const std::string t = trim(line);
                if (cur && !t.empty() && std::isxdigit(static_cast<unsigned char>(t[0])) &&
                    t.find("lock:contention_") == std::string::npos) {
                    try {
                        ev.frames.push_back(parseFrame(t));
                        continue;
                    } catch (const std::exception&) {
                        fail("bad callchain line '" + t + "'");
                    }
                }
                if (t.find("lock:contention_") == std::string::npos)
                    fail("unexpected line '" + t.substr(0, 60) + "'");
            }
            // An event header.
            flush();
            const auto evPos = line.find("lock:contention_");
            if (evPos == std::string::npos) {
                if (line.find(": ") != std::string::npos && line.find('[') != std::string::npos)
                    continue;  // another event type: ignored
                fail("not a perf script event line");
            }
            ev = Event{};
            ev.begin = line.compare(evPos, 21, "lock:contention_begin") == 0;
            // Timestamp: the "sec.usec:" token right before the event name.
            const std::string head = trim(line.substr(0, evPos));
            const auto tsStart = head.find_last_of(' ');
            std::string ts = head.substr(tsStart == std::string::npos ? 0 : tsStart + 1);
            if (!ts.empty() && ts.back() == ':')
                ts.pop_back();
            const std::string beforeTs = tsStart == std::string::npos ? "" : trim(head.substr(0, tsStart));
            try {
                const double tsNs = parseNonNegative(ts) * 1e9;
                if (tsNs >= 1.8e19)
                    throw std::invalid_argument("timestamp out of range: '" + ts + "'");
                ev.ts_ns = uint64_t(std::llround(tsNs));
                // "comm tid [cpu]" or "comm tid/pid [cpu]"; comm may hold spaces.
                const auto cpu = beforeTs.rfind(" [");
                const std::string commTid = trim(beforeTs.substr(0, cpu));
                const auto tidPos = commTid.find_last_of(' ');
                std::string tid = commTid.substr(tidPos == std::string::npos ? 0 : tidPos + 1);
                if (auto slash = tid.find('/'); slash != std::string::npos)
                    tid = tid.substr(slash + 1);
                ev.tid = parseCount(tid);
                const std::string rest = trim(line.substr(line.find(':', evPos + 16) + 1));
                std::string addr = rest.substr(0, rest.find_first_of(" \t("));
                if (addr.rfind("0x", 0) == 0)
                    addr = addr.substr(2);
                ev.lock = parseCount(addr, 16);
                if (auto f = rest.find("flags="); f != std::string::npos)
                    ev.flags = rest.substr(f + 6, rest.find(')', f) - f - 6);
                if (auto r = rest.find("ret="); r != std::string::npos)
                    ev.ret = std::stoi(rest.substr(r + 4));
            } catch (const std::exception& e) {
                fail("cannot parse the event header '" + line.substr(0, 80) + "' (" + e.what() + ")");
            }
            cur = &ev;
        }
        flush();
        if (events == 0)
            throw ImportError(source + ": no lock:contention_begin/end events found; record them with "
                                       "`perf lock record -g -- <command>` and convert with `perf script -i perf.data`");
        c.stats.events = events;
        c.stats.unmatched += open.size();  // begins still waiting when recording stopped
        c.meta.duration_s = double(lastTs - firstTs) / 1e9;
        builder.finish(c);
        return validated(c, source);
    }
};
} // namespace

const Importer& perfScriptImporter()
{
    static const PerfScript i;
    return i;
}

} // namespace lockscope::reports::detail
