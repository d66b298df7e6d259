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

// The value of a "# key : value" header line of perf script's output, or ""
// when the line is another header.
std::string headerValue(const std::string& line, const char* key)
{
    const std::string p = std::string("# ") + key;
    if (line.rfind(p, 0) != 0)
        return std::string();
    const auto colon = line.find(':', p.size());
    return colon == std::string::npos ? std::string() : trim(line.substr(colon + 1));
}

// The event header "comm tid [cpu] sec.usec: lock:contention_X: 0xADDR
// (flags=...)" whose event name starts at evPos. Throws std::exception on a
// field it cannot read.
Event parseEventHeader(const std::string& line, size_t evPos)
{
    Event ev;
    ev.begin = line.compare(evPos, 21, "lock:contention_begin") == 0;
    // Timestamp: the "sec.usec:" token right before the event name.
    const std::string head = trim(line.substr(0, evPos));
    const auto tsStart = head.find_last_of(' ');
    std::string ts = head.substr(tsStart == std::string::npos ? 0 : tsStart + 1);
    if (!ts.empty() && ts.back() == ':')
        ts.pop_back();
    const std::string beforeTs = tsStart == std::string::npos ? "" : trim(head.substr(0, tsStart));
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
    return ev;
}

// The lock's caller, as record finds it: the first frame that is neither a
// lock nor a tracing internal (an unnamed one too); nullptr when there is none.
const Frame* firstCaller(const std::vector<Frame>& frames)
{
    for (const auto& f : frames)
        if (!isLockInternalFrame(f.function))
            return &f;
    return nullptr;
}

// One pass over the text, a line at a time: what lives between lines (the
// event being read, the begins still waiting for their end, the capture so
// far) and one method per kind of line.
class PerfScriptParser {
public:
    explicit PerfScriptParser(const std::string& source)
        : source_(source)
    {
        c_.meta.label = "perf-script";
        c_.meta.tool_version = LOCKSCOPE_VERSION;
        c_.meta.command = {"perf", "lock", "record"};
        c_.probes.push_back({"lock_contention", "lock:contention_begin,lock:contention_end", "tracepoint", true,
                             "imported from perf script text"});
    }

    void add(const std::string& line)
    {
        ++lineNo_;
        if (trim(line).empty()) {
            flush();
            return;
        }
        if (line[0] == '#') {
            headerLine(line);
            return;
        }
        if ((line[0] == '\t' || line[0] == ' ') && callchainLine(trim(line)))
            return;
        eventLine(line);
    }

    Capture finish()
    {
        flush();
        if (events_ == 0)
            throw ImportError(source_ + ": no lock:contention_begin/end events found; record them with "
                                        "`perf lock record -g -- <command>` and convert with `perf script -i perf.data`");
        c_.stats.events = events_;
        c_.stats.unmatched += open_.size();  // begins still waiting when recording stopped
        c_.meta.duration_s = double(lastTs_ - firstTs_) / 1e9;
        builder_.finish(c_);
        return validated(c_, source_);
    }

private:
    [[noreturn]] void fail(const std::string& what) const
    {
        throw ImportError(source_ + ":" + std::to_string(lineNo_) + ": " + what +
                          "; expected the text of `perf script` on a `perf lock record` file");
    }

    // "# os release : 6.1.0" and the like: the recording machine's facts.
    void headerLine(const std::string& line)
    {
        if (auto v = headerValue(line, "os release"); !v.empty())
            c_.meta.kernel_release = v;
        if (auto v = headerValue(line, "hostname"); !v.empty())
            c_.meta.hostname = v;
        if (auto v = headerValue(line, "cpudesc"); !v.empty())
            c_.meta.cpu_model = v;
        if (auto v = headerValue(line, "nrcpus online"); !v.empty())
            try {
                const uint64_t n = parseCount(v);
                if (n > 1u << 20)
                    throw std::invalid_argument("out of range: '" + v + "'");
                c_.meta.cpu_count = uint32_t(n);
            } catch (const std::exception& e) {
                fail(std::string("bad 'nrcpus online' header (") + e.what() + ")");
            }
    }

    // An indented line: a frame of the open event's callchain (true), or an
    // indented event header (false, for eventLine). Anything else fails.
    bool callchainLine(const std::string& t)
    {
        const bool event = t.find("lock:contention_") != std::string::npos;
        if (pending_ && !t.empty() && std::isxdigit(static_cast<unsigned char>(t[0])) && !event) {
            try {
                ev_.frames.push_back(parseFrame(t));
                return true;
            } catch (const std::exception&) {
                fail("bad callchain line '" + t + "'");
            }
        }
        if (!event)
            fail("unexpected line '" + t.substr(0, 60) + "'");
        return false;
    }

    // An event header: ends the event before it and opens this one; another
    // event type's header is skipped.
    void eventLine(const std::string& line)
    {
        flush();
        const auto evPos = line.find("lock:contention_");
        if (evPos == std::string::npos) {
            if (line.find(": ") != std::string::npos && line.find('[') != std::string::npos)
                return;  // another event type: ignored
            fail("not a perf script event line");
        }
        try {
            ev_ = parseEventHeader(line, evPos);
        } catch (const std::exception& e) {
            fail("cannot parse the event header '" + line.substr(0, 80) + "' (" + e.what() + ")");
        }
        pending_ = true;
    }

    // The event just read is complete: a begin waits for its end; an end
    // makes a wait of the begin it pairs with (by tid and lock address).
    void flush()
    {
        if (!pending_)
            return;
        pending_ = false;
        ++events_;
        if (!firstTs_)
            firstTs_ = ev_.ts_ns;
        lastTs_ = std::max(lastTs_, ev_.ts_ns);
        const auto key = std::make_pair(ev_.tid, ev_.lock);
        if (ev_.begin) {
            open_[key] = ev_;  // a repeated begin replaces a stale one
            return;
        }
        auto it = open_.find(key);
        if (it == open_.end()) {
            ++c_.stats.unmatched;
            return;
        }
        addWait(it->second, ev_);
        open_.erase(it);
    }

    void addWait(const Event& b, const Event& e)
    {
        const std::string type = typeFromFlags(b.flags);
        // Captures require a frame per stack; events recorded without -g have none.
        const uint32_t stack = builder_.stackId(
            b.frames.empty() ? std::vector<Frame>{Frame{"[no callchain]", 0, "", std::nullopt}} : b.frames);
        const bool aborted = e.ret < 0;
        if (aborted)
            ++c_.stats.aborted_waits;
        builder_.addWait(callerLockKey(type, firstCaller(b.frames)), type, e.lock, stack,
                         e.ts_ns >= b.ts_ns ? e.ts_ns - b.ts_ns : 0, aborted);
    }

    const std::string& source_;
    Capture c_;
    CaptureBuilder builder_;
    std::map<std::pair<uint64_t, uint64_t>, Event> open_;  // (tid, lock) -> begin
    size_t lineNo_ = 0, events_ = 0;
    uint64_t firstTs_ = 0, lastTs_ = 0;
    bool pending_ = false;  // ev_ is an event whose callchain may still follow
    Event ev_;
};

class PerfScript final : public Importer {
public:
    std::string_view name() const noexcept override { return "perf-script"; }

    Capture read(std::string_view text, const std::string& source) const override
    {
        PerfScriptParser parser(source);
        std::istringstream in{std::string(text)};
        std::string line;
        while (std::getline(in, line))
            parser.add(line);
        return parser.finish();
    }
};
} // namespace

const Importer& perfScriptImporter()
{
    static const PerfScript i;
    return i;
}

} // namespace lockscope::reports::detail
