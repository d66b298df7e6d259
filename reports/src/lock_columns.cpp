// SPDX-License-Identifier: GPL-2.0-or-later
#include "lockscope/reports/lock_columns.h"

#include <array>

namespace lockscope::reports {

LockFigures lockFigures(const LockRow& l)
{
    return {&l.key, &l.name, &l.type, &l.caller, &l.wait, &l.hold, &l.acquire,
            l.p50_wait_ns, l.p99_wait_ns, l.p99_acquire_ns, l.max_wait_basis, l.p99_wait_basis};
}

LockFigures lockFigures(const Lock& l, const Meta* meta)
{
    static const std::string kNoCaller;
    LockFigures f{&l.key, &l.name, &l.type, &kNoCaller, &l.wait, &l.hold, &l.acquire,
                  l.wait.percentile(50), l.wait.percentile(99), l.acquire.percentile(99), {}, {}};
    if (meta) { // the same bases the report's rows carry (report.cpp)
        const uint64_t exactNs = exactWaitNs(*meta);
        f.max_wait_basis = maxBasis(l.wait, l.wait_untimed, exactNs);
        f.p99_wait_basis = percentileBasis(l.wait, l.wait_untimed, exactNs, 99);
    }
    return f;
}

namespace {
using F = LockFigures;
using S = fmt::Style;
std::string ns(uint64_t v) { return fmt::duration(double(v)); }
// A time of something that may never have happened: none rather than "0 ns".
std::string timed(const Log2Hist& h, uint64_t v, const S& s) { return h.empty() ? std::string(s.none) : ns(v); }
uint64_t none(const F&) { return 0; }

// In LockColumn's order.
const std::array<LockColumnSpec, 15> kColumns{{
    {LockColumn::Key, "lock", "lock", ColumnUnit::Text, "key", none, [](const F& f, const S&) { return *f.key; }},
    {LockColumn::Type, "type", "type", ColumnUnit::Text, "type", none, [](const F& f, const S&) { return *f.type; }},
    {LockColumn::Contended, "contended", "contended", ColumnUnit::Count, nullptr,
     [](const F& f) { return f.wait->count(); },
     [](const F& f, const S& s) { return fmt::grouped(f.wait->count(), s.thousands); }},
    {LockColumn::TotalWait, "total wait", "total wait", ColumnUnit::Ns, nullptr,
     [](const F& f) { return f.wait->total(); }, [](const F& f, const S&) { return ns(f.wait->total()); }},
    {LockColumn::MaxWait, "max wait", "max", ColumnUnit::Ns, nullptr, [](const F& f) { return f.wait->max(); },
     [](const F& f, const S&) { return estimateMark(f.max_wait_basis) + ns(f.wait->max()); }},
    {LockColumn::AvgWait, "avg wait", "avg", ColumnUnit::Ns, nullptr, [](const F& f) { return f.wait->mean(); },
     [](const F& f, const S&) { return ns(f.wait->mean()); }},
    {LockColumn::P50Wait, "p50 wait", "p50", ColumnUnit::Ns, "p50_wait_ns", [](const F& f) { return f.p50_wait_ns; },
     [](const F& f, const S&) { return ns(f.p50_wait_ns); }},
    {LockColumn::P99Wait, "p99 wait", "p99", ColumnUnit::Ns, "p99_wait_ns", [](const F& f) { return f.p99_wait_ns; },
     [](const F& f, const S&) { return estimateMark(f.p99_wait_basis) + ns(f.p99_wait_ns); }},
    {LockColumn::Holds, "holds", "holds", ColumnUnit::Count, nullptr, [](const F& f) { return f.hold->count(); },
     [](const F& f, const S& s) { return fmt::grouped(f.hold->count(), s.thousands); }},
    {LockColumn::TotalHold, "total hold", "total hold", ColumnUnit::Ns, nullptr,
     [](const F& f) { return f.hold->total(); },
     [](const F& f, const S& s) { return timed(*f.hold, f.hold->total(), s); }},
    {LockColumn::AvgHold, "avg hold", "avg hold", ColumnUnit::Ns, nullptr, [](const F& f) { return f.hold->mean(); },
     [](const F& f, const S& s) { return timed(*f.hold, f.hold->mean(), s); }},
    {LockColumn::MaxHold, "max hold", "max hold", ColumnUnit::Ns, nullptr, [](const F& f) { return f.hold->max(); },
     [](const F& f, const S& s) { return timed(*f.hold, f.hold->max(), s); }},
    {LockColumn::Acquires, "slow acquires", "acquires", ColumnUnit::Count, nullptr,
     [](const F& f) { return f.acquire->count(); },
     [](const F& f, const S& s) { return fmt::grouped(f.acquire->count(), s.thousands); }},
    // The report's JSON writes p99_acquire_ns only for a lock with slow acquisitions.
    {LockColumn::P99Acquire, "p99 acquire", "p99 acquire", ColumnUnit::Ns, nullptr,
     [](const F& f) { return f.p99_acquire_ns; },
     [](const F& f, const S& s) { return timed(*f.acquire, f.p99_acquire_ns, s); }},
    {LockColumn::Caller, "caller", "caller", ColumnUnit::Text, "caller", none,
     [](const F& f, const S&) { return *f.caller; }},
}};
} // namespace

const LockColumnSpec& lockColumn(LockColumn c) { return kColumns.at(static_cast<size_t>(c)); }
std::span<const LockColumnSpec> lockColumns() { return kColumns; }

} // namespace lockscope::reports
