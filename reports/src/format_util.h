// SPDX-License-Identifier: GPL-2.0-or-later
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "lockscope/capture/histogram.h"
#include "lockscope/capture/site_shares.h"
#include "lockscope/capture/units.h"
#include "lockscope/reports/compare.h"
#include "lockscope/reports/format.h"

// Layout and escaping shared by every renderer; the figures themselves are
// written by the public lockscope/reports/format.h.
namespace lockscope::reports::fmt {

std::string padLeft(const std::string& s, size_t width);
std::string padRight(const std::string& s, size_t width);
std::string truncate(const std::string& s, size_t width);
std::string htmlEscape(const std::string& s);
// Markdown text (a table cell, a heading, a quote): printable() first, then
// backslash before every character Markdown or a GFM table gives a meaning
// (| ` * _ < > [ ] \ and a leading # - + = or "1."), so a name is one cell
// of literal text.
std::string mdEscape(const std::string& s);
// A Markdown code span: printable(), `|` escaped (GFM splits cells even
// inside code spans), in a backtick run longer than any inside.
std::string mdCode(const std::string& s);
// A fence for a Markdown code block holding `body`: backticks, at least
// three, more than the longest run in it.
std::string mdFence(const std::string& body);
// Text safe for a terminal and for one line: ASCII controls (ESC, newline,
// ...) and DEL as C escapes (\e, \n, \x7f), the C1 controls U+0080-U+009F
// as \u0080.., bytes that are not UTF-8 as \xNN, and the backslash
// doubled, so the escape cannot be forged; printable UTF-8 is kept.
std::string printable(const std::string& s);
// s with every byte that is not part of a UTF-8 sequence as U+FFFD, as
// nlohmann's dump(error_handler_t::replace) writes it: for formats that
// must be UTF-8 (pprof's string table) but carry names that need not be.
std::string validUtf8(const std::string& s);
// A whole terminal report: as printable() but its own newlines kept and
// backslashes left alone (the names in it went through printable()), so no
// ESC sequence or other control character reaches the terminal.
std::string terminalText(const std::string& text);
// One frame of Brendan Gregg's folded format: printable(), then ';' (the
// frame separator) as ':'. flamegraph.pl, speedscope and difffolded.pl read
// the result; the last space of a line still separates the weight.
std::string foldedFrame(const std::string& s);
// A bucket's low bound as a time: "512 ns", "1.02 us" (the GUI's labels too).
using units::bucketLabel;
// First and last non-empty bucket over one or two histograms (lo > hi when both are empty).
std::pair<unsigned, unsigned> bucketRange(const Log2Hist& a, const Log2Hist* b);

// The `value ---- distribution ---- count` histogram with @ bars.
std::string textHistogram(const Log2Hist& h, const std::string& indent, const char* unit = "ns");
// Before and after side by side, each bar normalized to its own side.
std::string textHistogramPair(const Log2Hist& before, const Log2Hist& after, const std::string& indent);

// Joins a path innermost first with " <- ", at most maxFrames frames, each
// printable(). Frame: std::string or InternedString.
template <class Frame> std::string pathText(const std::vector<Frame>& outermostFirst, size_t maxFrames = 8)
{
    std::string s;
    size_t n = 0;
    for (auto it = outermostFirst.rbegin(); it != outermostFirst.rend(); ++it, ++n) {
        if (n == maxFrames) {
            s += " <- ...";
            break;
        }
        if (n)
            s += " <- ";
        s += printable(static_cast<const std::string&>(*it));
    }
    return s;
}

// Where a lock's path shares come from under stack sampling: "shares from
// 5,087 walked of 775,912 waits (±1.4 points at 95%)", holds likewise; ""
// when every event of both kinds was walked.
std::string walkedShares(const WalkedShare& waits, const WalkedShare& holds);

} // namespace lockscope::reports::fmt
