// SPDX-License-Identifier: GPL-2.0-or-later
#include "format_util.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string_view>

namespace lockscope::reports::fmt {

std::string walkedShares(const WalkedShare& waits, const WalkedShare& holds)
{
    std::string out;
    auto one = [&](const WalkedShare& w, const char* kind) {
        if (!w.sampled())
            return;
        out += std::string(out.empty() ? "shares from " : "; ") + grouped(w.walked) + " walked of " + grouped(w.all) +
               " " + kind;
        if (w.walked)
            out += " (±" + fixed(100.0 * w.shareUncertainty(), 1) + " points at 95%)";
    };
    one(waits, "waits");
    one(holds, "holds");
    return out;
}

std::string padLeft(const std::string& s, size_t width)
{
    return s.size() >= width ? s : std::string(width - s.size(), ' ') + s;
}

std::string padRight(const std::string& s, size_t width)
{
    return s.size() >= width ? s : s + std::string(width - s.size(), ' ');
}

std::string truncate(const std::string& s, size_t width)
{
    return s.size() <= width ? s : s.substr(0, width - 3) + "...";
}

std::string htmlEscape(const std::string& s)
{
    std::string o;
    o.reserve(s.size());
    for (char c : s) {
        switch (c) {
        case '&': o += "&amp;"; break;
        case '<': o += "&lt;"; break;
        case '>': o += "&gt;"; break;
        case '"': o += "&quot;"; break;
        case '\'': o += "&#39;"; break;
        default: o += c;
        }
    }
    return o;
}

namespace {
// The length of the UTF-8 sequence of a non-ASCII lead byte at s[i] (its
// code point in cp), 0 if it is not one: continuation bytes as the lead
// byte says, no overlong forms, no surrogates, nothing past U+10FFFF.
size_t utf8SequenceAt(const std::string& s, size_t i, uint32_t& cp)
{
    const auto c = static_cast<unsigned char>(s[i]);
    const size_t len = c >= 0xf0 && c <= 0xf4 ? 4 : c >= 0xe0 ? (c <= 0xef ? 3 : 0) : c >= 0xc2 ? 2 : 0;
    cp = len == 2 ? c & 0x1fu : len == 3 ? c & 0x0fu : c & 0x07u;
    bool ok = len && i + len <= s.size();
    for (size_t k = 1; ok && k < len; ++k) {
        const auto cc = static_cast<unsigned char>(s[i + k]);
        ok = (cc & 0xc0) == 0x80;
        cp = cp << 6 | (cc & 0x3fu);
    }
    ok = ok && !(len == 3 && cp < 0x800) && !(len == 4 && (cp < 0x10000 || cp > 0x10ffff)) &&
         !(cp >= 0xd800 && cp <= 0xdfff);
    return ok ? len : 0;
}

std::string escapeControls(const std::string& s, bool wholeText)
{
    static const char kHex[] = "0123456789abcdef";
    std::string o;
    o.reserve(s.size());
    auto hexByte = [&](const char* prefix, unsigned char c) {
        o += prefix;
        o += kHex[c >> 4];
        o += kHex[c & 15];
    };
    for (size_t i = 0; i < s.size();) {
        const auto c = static_cast<unsigned char>(s[i]);
        if (c < 0x80) {
            switch (c) {
            case '\\': o += wholeText ? "\\" : "\\\\"; break;
            case '\n': o += wholeText ? "\n" : "\\n"; break;
            case '\r': o += "\\r"; break;
            case '\t': o += "\\t"; break;
            case 0x1b: o += "\\e"; break;
            default:
                if (c < 0x20 || c == 0x7f)
                    hexByte("\\x", c);
                else
                    o += static_cast<char>(c);
            }
            ++i;
            continue;
        }
        uint32_t cp = 0;
        const size_t len = utf8SequenceAt(s, i, cp);
        if (!len) {
            hexByte("\\x", c);
            ++i;
        } else if (cp <= 0x9f) {
            hexByte("\\u00", static_cast<unsigned char>(cp)); // C1 control: 0x9b is a CSI
            i += len;
        } else {
            o.append(s, i, len);
            i += len;
        }
    }
    return o;
}

} // namespace

std::string validUtf8(const std::string& s)
{
    std::string o;
    o.reserve(s.size());
    for (size_t i = 0; i < s.size();) {
        uint32_t cp = 0;
        const size_t len = static_cast<unsigned char>(s[i]) < 0x80 ? 1 : utf8SequenceAt(s, i, cp);
        if (len)
            o.append(s, i, len);
        else
            o += "\xef\xbf\xbd"; // U+FFFD, as the JSON writers' error_handler_t::replace
        i += len ? len : 1;
    }
    return o;
}

std::string printable(const std::string& s)
{
    return escapeControls(s, false);
}

std::string terminalText(const std::string& text)
{
    return escapeControls(text, true);
}

std::string mdEscape(const std::string& raw)
{
    const std::string s = printable(raw);
    constexpr auto npos = std::string::npos;
    // What makes a line a heading, list item, quote or setext underline.
    const size_t lead = s.find_first_not_of(' ');
    const size_t digitsEnd = lead == npos ? npos : s.find_first_not_of("0123456789", lead);
    const size_t orderedMark =
        digitsEnd != npos && digitsEnd > lead && (s[digitsEnd] == '.' || s[digitsEnd] == ')') ? digitsEnd : npos;
    std::string o;
    o.reserve(s.size() + 8);
    for (size_t i = 0; i < s.size(); ++i) {
        const char c = s[i];
        if (std::string_view("|`*_<>[]\\").find(c) != npos ||
            (i == lead && std::string_view("#-+=~").find(c) != npos) || i == orderedMark)
            o += '\\';
        o += c;
    }
    return o;
}

namespace {
size_t longestBacktickRun(const std::string& s)
{
    size_t longest = 0, run = 0;
    for (char c : s) {
        run = c == '`' ? run + 1 : 0;
        longest = std::max(longest, run);
    }
    return longest;
}
} // namespace

std::string mdCode(const std::string& raw)
{
    std::string s;
    for (char c : printable(raw)) {
        if (c == '|')
            s += '\\';
        s += c;
    }
    const std::string fence(longestBacktickRun(s) + 1, '`');
    // A span that starts or ends with a backtick needs a space inside its fence.
    const bool pad = !s.empty() && (s.front() == '`' || s.back() == '`');
    return fence + (pad ? " " : "") + s + (pad ? " " : "") + fence;
}

std::string mdFence(const std::string& body)
{
    return std::string(std::max<size_t>(3, longestBacktickRun(body) + 1), '`');
}

std::string foldedFrame(const std::string& s)
{
    std::string o = printable(s);
    std::replace(o.begin(), o.end(), ';', ':');
    return o;
}

std::pair<unsigned, unsigned> bucketRange(const Log2Hist& a, const Log2Hist* b)
{
    unsigned lo = Log2Hist::kBuckets, hi = 0;
    auto scan = [&](const Log2Hist& h) {
        for (unsigned i = 0; i < Log2Hist::kBuckets; ++i)
            if (h.bucket(i)) {
                lo = std::min(lo, i);
                hi = std::max(hi, i);
            }
    };
    scan(a);
    if (b)
        scan(*b);
    return {lo, hi};
}

namespace {
std::string bar(double fraction, size_t width)
{
    const auto n = size_t(std::lround(std::clamp(fraction, 0.0, 1.0) * double(width)));
    // A non-empty bucket always shows at least one @.
    const size_t shown = (fraction > 0.0 && n == 0) ? 1 : n;
    return std::string(shown, '@') + std::string(width - shown, ' ');
}
} // namespace

std::string textHistogram(const Log2Hist& h, const std::string& indent, const char* unit)
{
    if (h.empty())
        return indent + "(no events)\n";
    const auto [lo, hi] = bucketRange(h, nullptr);
    uint64_t peak = 0;
    for (unsigned i = lo; i <= hi; ++i)
        peak = std::max(peak, h.bucket(i));
    std::string out = indent + padLeft(std::string("value (") + unit + ")", 15) +
                      "  ------------ distribution ------------  count\n";
    for (unsigned i = lo; i <= hi; ++i) {
        const uint64_t c = h.bucket(i);
        out += indent + padLeft(std::to_string(Log2Hist::bucketLow(i)), 15) + " |" +
               bar(double(c) / double(peak), 40) + "| " + std::to_string(c) + "\n";
    }
    return out;
}

std::string textHistogramPair(const Log2Hist& before, const Log2Hist& after, const std::string& indent)
{
    if (before.empty() && after.empty())
        return indent + "(no events)\n";
    // Plain names: clang 14 (the fuzz build) cannot capture structured bindings.
    const auto range = bucketRange(before, &after);
    const unsigned lo = range.first, hi = range.second;
    auto peak = [&](const Log2Hist& h) {
        uint64_t p = 0;
        for (unsigned i = lo; i <= hi; ++i)
            p = std::max(p, h.bucket(i));
        return p;
    };
    const uint64_t pb = peak(before), pa = peak(after);
    std::string out = indent + padLeft("value (ns)", 15) + "  ------ before ------ " + padLeft("count", 9) +
                      "  ------ after ------- " + padLeft("count", 9) + "\n";
    for (unsigned i = lo; i <= hi; ++i) {
        const uint64_t b = before.bucket(i), a = after.bucket(i);
        out += indent + padLeft(std::to_string(Log2Hist::bucketLow(i)), 15) + " |" +
               bar(pb ? double(b) / double(pb) : 0.0, 20) + "|" + padLeft(std::to_string(b), 9) + "  |" +
               bar(pa ? double(a) / double(pa) : 0.0, 20) + "|" + padLeft(std::to_string(a), 9) + "\n";
    }
    return out;
}

} // namespace lockscope::reports::fmt
