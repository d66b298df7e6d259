// SPDX-License-Identifier: GPL-2.0-or-later
// The bulk of a capture for the fast reader: histograms, symbols, stacks and
// locks, with the checks of capture_reader.cpp and histogram_json.cpp.
#include <iterator>
#include <unordered_set>
#include <utility>

#include "fast_reader.h"

namespace lockscope::detail::fast {
namespace {

using Buckets = std::array<uint64_t, Log2Hist::kBuckets>;

// Version 1: all 64 counts.
void fullBuckets(od::value& v, Buckets& b)
{
    size_t n = 0;
    for (auto e : v.get_array()) {
        need(n < Log2Hist::kBuckets);
        od::value x = e.value();
        b[n++] = u64(x);
    }
    need(n == Log2Hist::kBuckets);
}

// Compact: the non-empty ones as [bucket, count, ...], ascending.
void sparseBuckets(od::value& v, Buckets& b)
{
    uint64_t next = 0; // the lowest bucket the next pair may name
    uint64_t bucket = 0;
    bool odd = false;
    for (auto e : v.get_array()) {
        od::value x = e.value();
        if (!odd) {
            bucket = u64(x);
            need(bucket >= next && bucket < Log2Hist::kBuckets);
        } else {
            b[bucket] = u64(x);
            need(b[bucket] != 0);
            next = bucket + 1;
        }
        odd = !odd;
    }
    need(!odd);
}

void checkFrame(const Frame& f) { need(!f.function.empty() || f.address.has_value()); }

// Version 1: each frame an object.
Frame fullFrame(od::value& v)
{
    static constexpr std::array<std::string_view, 4> keys { "function", "offset", "module", "address" };
    Frame f;
    const uint64_t seen = members(v.get_object(), keys, [&](size_t i, od::value& x) {
        switch (i) {
        case 0: f.function = str(x); break;
        case 1: f.offset = u64(x); break;
        case 2: f.module = str(x); break;
        default: f.address = address(x); break;
        }
    });
    need((seen & bitsBelow(3)) == bitsBelow(3));
    checkFrame(f);
    return f;
}

// Compact: [symbol, offset, ...], the address being the symbol's base + offset.
void compactFrames(od::value& v, State& st)
{
    const Symbol* sym = nullptr;
    for (auto e : v.get_array()) {
        od::value x = e.value();
        if (!sym) {
            const uint64_t id = u64(x);
            need(id < st.symbols.size());
            sym = &st.symbols[id];
            continue;
        }
        Frame f { sym->function, u64(x), sym->module, std::nullopt };
        if (sym->base)
            f.address = *sym->base + f.offset;
        checkFrame(f);
        st.scratch.push_back(std::move(f));
        sym = nullptr;
    }
    need(sym == nullptr);
}

std::vector<Frame> frames(od::value& v, State& st)
{
    st.scratch.clear();
    if (st.compact) {
        compactFrames(v, st);
    } else {
        for (auto e : v.get_array()) {
            od::value x = e.value();
            st.scratch.push_back(fullFrame(x));
        }
    }
    need(!st.scratch.empty());
    // Sized exactly: the frames are most of a capture's memory.
    return { std::make_move_iterator(st.scratch.begin()), std::make_move_iterator(st.scratch.end()) };
}

Stack stack(od::value& v, State& st)
{
    static constexpr std::array<std::string_view, 3> keys { "id", "kind", "frames" };
    Stack s;
    const uint64_t seen = members(v.get_object(), keys, [&](size_t i, od::value& x) {
        if (i == 0) {
            s.id = u32(x);
        } else if (i == 1) {
            const std::string_view kind = x.get_string();
            need(kind == "kernel" || kind == "user");
            s.kind = kind == "kernel" ? StackKind::Kernel : StackKind::User;
        } else {
            s.frames = frames(x, st);
        }
    });
    need(seen == bitsBelow(3));
    return s;
}

Holder holder(od::value& v, const State& st)
{
    static constexpr std::array<std::string_view, 5> keys { "stack_id", "count", "wait_ns", "owner_tid",
        "owner_comm" };
    Holder h;
    const uint64_t seen = members(v.get_object(), keys, [&](size_t i, od::value& x) {
        switch (i) {
        case 0: h.stack_id = u32(x); break;
        case 1: h.count = u64(x); break;
        case 2: h.wait_ns = u64(x); break;
        case 3: h.owner_tid = u32(x); break;
        default: h.owner_comm = str(x); break;
        }
    });
    need((seen & bitsBelow(3)) == bitsBelow(3) && h.count != 0);
    st.checkRef(h.stack_id, StackKind::Kernel);
    return h;
}

// The members a lock and its sites share: wait, wait_untimed, hold, acquire.
struct Timing {
    Log2Hist wait;
    uint64_t untimed = 0;
    Log2Hist hold;
    Log2Hist acquire;
};

LockSite site(od::value& v, const State& st)
{
    static constexpr std::array<std::string_view, 7> keys { "stack_id", "wait", "hold", "user_stack_id",
        "wait_untimed", "acquire", "holders" };
    LockSite s;
    const uint64_t seen = members(v.get_object(), keys, [&](size_t i, od::value& x) {
        switch (i) {
        case 0: s.stack_id = u32(x); break;
        case 1: s.wait = hist(x, st); break;
        case 2: s.hold = hist(x, st); break;
        case 3: s.user_stack_id = u32(x); break;
        case 4: s.wait_untimed = u64(x); break;
        case 5: s.acquire = hist(x, st); break;
        default:
            for (auto e : x.get_array()) {
                od::value h = e.value();
                s.holders.push_back(holder(h, st));
            }
            break;
        }
    });
    need((seen & bitsBelow(3)) == bitsBelow(3) && s.wait_untimed <= s.wait.count());
    st.checkRef(s.stack_id);
    if (s.user_stack_id)
        st.checkRef(*s.user_stack_id, StackKind::User);
    return s;
}

Lock lock(od::value& v, const State& st)
{
    static constexpr std::array<std::string_view, 12> keys { "key", "type", "instances", "aborted", "wait",
        "hold", "sites", "name", "cgroup", "address", "wait_untimed", "acquire" };
    Lock l;
    const uint64_t seen = members(v.get_object(), keys, [&](size_t i, od::value& x) {
        switch (i) {
        case 0: l.key = nonEmptyStr(x); break;
        case 1: l.type = nonEmptyStr(x); break;
        case 2: l.instances = u32(x); break;
        case 3: l.aborted = u64(x); break;
        case 4: l.wait = hist(x, st); break;
        case 5: l.hold = hist(x, st); break;
        case 6: {
            // Sized exactly: the sites (240 bytes each, their histograms'
            // buckets besides) are most of the locks' memory.
            od::array sites = x.get_array();
            l.sites.reserve(sites.count_elements());
            for (auto e : sites) {
                od::value s = e.value();
                l.sites.push_back(site(s, st));
            }
            break;
        }
        case 7: l.name = nonEmptyStr(x); break;
        case 8: l.cgroup = nonEmptyStr(x); break;
        case 9: l.address = address(x); break;
        case 10: l.wait_untimed = u64(x); break;
        default: l.acquire = hist(x, st); break;
        }
    });
    need((seen & bitsBelow(7)) == bitsBelow(7) && l.instances != 0 && l.wait_untimed <= l.wait.count());
    return l;
}

} // namespace

Log2Hist hist(od::value& v, const State& st)
{
    static constexpr std::array<std::string_view, 5> full { "count", "total_ns", "min_ns", "max_ns", "hist" };
    static constexpr std::array<std::string_view, 5> compact { "count", "total_ns", "min_ns", "max_ns",
        "buckets" };
    std::array<uint64_t, 4> n {};
    Buckets b {};
    const uint64_t seen = members(v.get_object(), st.compact ? compact : full, [&](size_t i, od::value& x) {
        if (i < 4)
            n[i] = u64(x);
        else if (st.compact)
            sparseBuckets(x, b);
        else
            fullBuckets(x, b);
    });
    need(seen == bitsBelow(5));
    const Log2Hist h = Log2Hist::fromParts(b, n[0], n[1], n[2], n[3]);
    need(h.consistent() && (n[0] != 0 || n[2] == 0));
    return h;
}

Symbol symbol(od::value& v)
{
    static constexpr std::array<std::string_view, 3> keys { "function", "module", "address" };
    Symbol s;
    const uint64_t seen = members(v.get_object(), keys, [&](size_t i, od::value& m) {
        if (i == 0)
            s.function = str(m);
        else if (i == 1)
            s.module = str(m);
        else
            s.base = address(m);
    });
    need((seen & bitsBelow(2)) == bitsBelow(2));
    return s;
}

void addStack(od::value& v, State& st, std::vector<Stack>& out)
{
    out.push_back(stack(v, st));
    need(st.kinds.add(out.back().id, out.back().kind)); // else a duplicate id
}

void addLock(od::value& v, State& st, std::vector<Lock>& out)
{
    out.push_back(lock(v, st));
    need(st.lockKeys.insert(out.back().key).second); // a duplicate key
}

} // namespace lockscope::detail::fast
