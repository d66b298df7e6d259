// SPDX-License-Identifier: GPL-2.0-or-later
#include <cmath>
#include <sstream>

#include "exchange_internal.h"
#include "import_common.h"

// /proc/lock_stat (CONFIG_LOCK_STAT, "lock_stat version 0.4"): one line per
// lock class and read/write state,
//   <class name>: con-bounces contentions wt-min wt-max wt-total wt-avg
//                 acq-bounces acquisitions ht-min ht-max ht-total ht-avg
// with times in microseconds (2 decimals), then up to 4 contention points
// ("<class> <count> [<ip>] sym+off/len"), a dashed line, and up to 4
// contending points (the holders' sites).
//
// lock_stat keeps count/min/max/total only, no distribution. The importer
// therefore synthesizes a histogram that matches them exactly (min and max in
// their buckets, the rest at the mean), which keeps totals, averages and the
// count test right but makes the shape test meaningless for such captures.
// Contention points become one-frame call sites sharing the class's wait
// in proportion to their counts; contending points are kept as sites of a
// "<class>/holders" entry with counts only, so they show who was contended with.
namespace lockscope::reports::detail {

namespace {
uint64_t usToNs(const std::string& s)
{
    const double ns = parseNonNegative(s) * 1000.0;
    if (ns >= 1.8e19)
        throw std::invalid_argument("time out of range: '" + s.substr(0, 40) + "'");
    return uint64_t(std::llround(ns));
}

Log2Hist synthesize(uint64_t count, uint64_t min, uint64_t max, uint64_t total)
{
    Log2Hist h;
    if (count == 0)
        return h;
    if (count == 1) {
        h.add(max);
        return h;
    }
    h.add(min);
    h.add(max);
    if (count > 2) {
        const uint64_t rest = total > min + max ? total - min - max : 0;
        const uint64_t each = std::clamp<uint64_t>(rest / (count - 2), min, max);
        h.add(each, count - 2);
    }
    // Keep the exact total from the file even though the synthetic values drift.
    return Log2Hist::fromParts(h.buckets(), count, total, min, max);
}

struct Point {
    uint64_t count = 0;
    Frame frame;
};

Point parsePoint(const std::string& line)
{
    // "&mm->mmap_sem   96   [<ffffffff815351c4>] __do_page_fault+0x1d4/0x510"
    Point p;
    const auto lb = line.find("[<");
    const auto rb = line.find(">]");
    if (lb == std::string::npos || rb == std::string::npos)
        throw std::invalid_argument("no [<ip>]");
    std::istringstream head(line.substr(0, lb));
    std::vector<std::string> tok;
    for (std::string t; head >> t;)
        tok.push_back(t);
    if (tok.size() < 2)
        throw std::invalid_argument("no count");
    p.count = parseCount(tok.back());
    p.frame.address = parseCount(line.substr(lb + 2, rb - lb - 2), 16);
    std::string sym = trim(line.substr(rb + 2));
    if (const auto slash = sym.find('/'); slash != std::string::npos)
        sym = sym.substr(0, slash);
    if (const auto plus = sym.rfind("+0x"); plus != std::string::npos) {
        p.frame.offset = parseCount(sym.substr(plus + 3), 16);
        sym = sym.substr(0, plus);
    }
    if (const auto sp = sym.find(" ["); sp != std::string::npos) {  // "sym+off/len [module]"
        p.frame.module = sym.substr(sp + 2, sym.find(']', sp) - sp - 2);
        sym = sym.substr(0, sp);
    }
    p.frame.function = sym;
    return p;
}

// One pass over the text, a line at a time: what lives between lines (the
// class being read and its contention points, the capture so far) and one
// method per kind of line.
class LockStatParser {
public:
    explicit LockStatParser(const std::string& source)
        : source_(source)
    {
        c_.meta.label = "lock_stat";
        c_.meta.tool_version = LOCKSCOPE_VERSION;
        c_.probes.push_back({"lock_stat", "/proc/lock_stat", "procfs", true, "imported from CONFIG_LOCK_STAT text"});
    }

    void add(const std::string& line)
    {
        ++lineNo_;
        const std::string t = trim(line);
        if (t.empty() || layoutLine(t))
            return;
        if (!sawHeader_)
            fail("missing the 'lock_stat version' header");
        if (t.find("[<") != std::string::npos)
            pointLine(t);
        else
            classLine(t);
    }

    Capture finish()
    {
        finishClass();
        if (!sawHeader_)
            throw ImportError(source_ + ": not /proc/lock_stat text (no 'lock_stat version' header); read it on a "
                                        "CONFIG_LOCK_STAT kernel after `echo 1 > /proc/sys/kernel/lock_stat`");
        builder_.finish(c_);
        return validated(c_, source_);
    }

private:
    [[noreturn]] void fail(const std::string& what) const
    {
        throw ImportError(source_ + ":" + std::to_string(lineNo_) + ": " + what +
                          "; expected /proc/lock_stat text (lock_stat version 0.4)");
    }

    // The version header, the lockdep warning, the column header and the
    // separators: true when t is one of them.
    bool layoutLine(const std::string& t)
    {
        if (t.rfind("lock_stat version", 0) == 0) {
            sawHeader_ = true;
            if (t != "lock_stat version 0.4")
                c_.probes.back().reason += " (" + t + ", parsed as 0.4)";
            return true;
        }
        if (t.find("*WARNING* lock debugging disabled") != std::string::npos) {
            c_.probes.back().reason += "; the kernel disabled lock debugging (a lockdep splat), figures stop there";
            return true;
        }
        if (t.find("class name") != std::string::npos && t.find("con-bounces") != std::string::npos)
            return true;
        if (t.find_first_not_of('-') == std::string::npos) {  // a dashed line
            if (cur_)
                pointSection_ = pointSection_ == 1 ? 2 : 1;
            return true;
        }
        if (t.find_first_not_of('.') == std::string::npos) {  // the dotted separator
            finishClass();
            return true;
        }
        return false;
    }

    // A contention point (before the class's dashed line) or a contending
    // point (after it) of the class being read.
    void pointLine(const std::string& t)
    {
        if (!cur_)
            fail("a contention point outside a lock class");
        try {
            Point p = parsePoint(t);
            if (pointSection_ == 2) {
                // Holders: kept as a separate class so they are visible but not summed twice.
                Lock& h = builder_.lock(curClass_ + "/holders", "holder-sites");
                builder_.site(h, builder_.stackId({p.frame})).hold.add(0, p.count);
                h.hold.add(0, p.count);
            } else {
                points_.push_back(std::move(p));
            }
        } catch (const std::exception& e) {
            fail("bad contention point '" + t.substr(0, 80) + "' (" + e.what() + ")");
        }
    }

    // A class statistics line: "<name>: 12 numbers". Names may contain ':'.
    void classLine(const std::string& t)
    {
        const auto colon = t.rfind(": ");
        if (colon == std::string::npos)
            fail("unrecognised line '" + t.substr(0, 80) + "'");
        finishClass();
        std::istringstream nums(t.substr(colon + 2));
        std::vector<std::string> f;
        for (std::string x; nums >> x;)
            f.push_back(x);
        if (f.size() != 12)
            fail("expected 12 numbers after the class name, got " + std::to_string(f.size()));
        curClass_ = t.substr(0, colon);
        std::string key = curClass_, type = "lockdep-class";
        if (key.size() > 2 && (key.ends_with("-R") || key.ends_with("-W"))) {
            type += key.ends_with("-R") ? ":R" : ":W";
        }
        try {
            const uint64_t contentions = parseCount(f[1]);
            const uint64_t acquisitions = parseCount(f[7]);
            Lock& l = builder_.lock(key, type);
            l.wait = synthesize(contentions, usToNs(f[2]), usToNs(f[3]), usToNs(f[4]));
            l.hold = synthesize(acquisitions, usToNs(f[8]), usToNs(f[9]), usToNs(f[10]));
            if (!l.wait.consistent() || !l.hold.consistent())
                fail("inconsistent min/max/total for class '" + key + "'");
            c_.stats.events += contentions + acquisitions;
            cur_ = &l;
            pointSection_ = 0;
        } catch (const ImportError&) {
            throw;
        } catch (const std::exception& e) {
            fail("bad number in class line '" + t.substr(0, 80) + "' (" + e.what() + ")");
        }
    }

    // The class's contention points become its call sites, sharing its wait
    // in proportion to their counts.
    void finishClass()
    {
        if (!cur_)
            return;
        uint64_t sum = 0;
        for (const auto& p : points_)
            sum += p.count;
        for (const auto& p : points_) {
            LockSite& site = builder_.site(*cur_, builder_.stackId({p.frame}));
            if (cur_->wait.count() && sum) {
                const uint64_t share = uint64_t(double(cur_->wait.total()) * double(p.count) / double(sum));
                const uint64_t each = p.count ? std::clamp<uint64_t>(share / p.count, cur_->wait.min(), cur_->wait.max()) : 0;
                site.wait.add(each, p.count);
            } else {
                site.hold.add(0, p.count);
            }
        }
        points_.clear();
        cur_ = nullptr;
    }

    const std::string& source_;
    Capture c_;
    CaptureBuilder builder_;
    size_t lineNo_ = 0;
    bool sawHeader_ = false;
    Lock* cur_ = nullptr;
    std::string curClass_;
    int pointSection_ = 0;  // 1: contention points, 2: contending points
    std::vector<Point> points_;
};

class LockStat final : public Importer {
public:
    std::string_view name() const noexcept override { return "lock-stat"; }

    Capture read(std::string_view text, const std::string& source) const override
    {
        LockStatParser parser(source);
        std::istringstream in{std::string(text)};
        std::string line;
        while (std::getline(in, line))
            parser.add(line);
        return parser.finish();
    }
};
} // namespace

const Importer& lockStatImporter()
{
    static const LockStat i;
    return i;
}

} // namespace lockscope::reports::detail
