// SPDX-License-Identifier: GPL-2.0-or-later
#pragma once

// A capture's text cut into pieces for simdjson (internal to lockscope_capture).
// simdjson indexes the whole text it is given before reading any of it: 4
// bytes of index and 5/3 of string buffer per byte of text, so a 31-MB
// capture took 175 MB of parser, more than the model read from it, all held
// with the text and the growing model. The fast reader gives it one top-level
// member at a time, and the big arrays a batch of elements at a time: the
// parser then holds a few MB, whatever the capture's size.
//
// The cutting finds where values end without parsing them: strings are
// skipped by their quotes and escapes, arrays and objects by counting their
// brackets. Whether a piece is valid JSON is left to simdjson, which reads
// every byte of it; the bytes between pieces (the root's braces, keys,
// colons, commas, whitespace) are checked here. Anything else declines.

#include <algorithm>
#include <cstddef>
#include <string_view>
#include <vector>

#include "fast_reader.h"

namespace lockscope::detail::fast {

// Text [begin, end) of one value, or of several elements of an array.
struct Span {
    char* begin;
    char* end;
};

// more, when given, is asked for the text after end as the cursor gets there.
class JsonCursor {
public:
    JsonCursor(char* begin, char* end, const More* more = nullptr)
        : p_(begin)
        , end_(end)
        , more_(more && *more ? more : nullptr)
    {
    }

    // After any whitespace: takes c when it comes next.
    bool take(char c);
    // A member's key and its colon; escaped keys decline (as keyOf does).
    std::string_view key();
    // The next value: its text, skipped over. Declines a value the text ends
    // in (one inside a document is followed by a separator).
    Span value();
    // Only whitespace is left.
    bool atEnd();
    // The text is read on as the cursor gets to its end.
    bool readsOn() const noexcept { return more_ != nullptr; }

private:
    void skipSpace();
    void skipString(); // from its opening quote to past its closing one
    bool refill(); // at the end of the text there: false when there is no more

    char* p_;
    char* end_;
    const More* more_;
};

// The text held between the brackets written over the bytes just outside
// piece (the separators there), as one JSON array for simdjson, its
// elements handed to onElement; the two bytes are put back on the way out,
// thrown or not. text_end: the end of the readable bytes, the padding included.
template <class F> void eachInPiece(od::parser& parser, Span piece, const char* text_end, F&& onElement)
{
    struct Restore {
        char* at;
        char was;
        ~Restore() { *at = was; }
    };
    char* const open = piece.begin - 1;
    const Restore before { open, *open }, after { piece.end, *piece.end };
    *open = '[';
    *piece.end = ']';
    const size_t size = static_cast<size_t>(piece.end + 1 - open);
    od::document doc = parser.iterate(simdjson::padded_string_view(open, size, static_cast<size_t>(text_end - open)));
    for (auto e : doc.get_array()) {
        od::value v = e.value();
        onElement(v);
    }
    need(doc.current_location().error() != simdjson::SUCCESS); // nothing after the array
}

#ifndef LOCKSCOPE_CAPTURE_PIECE_BYTES
#define LOCKSCOPE_CAPTURE_PIECE_BYTES (size_t { 1 } << 20)
#endif
// The fuzz build cuts pieces of a few hundred bytes (core/capture/fuzz), so
// that its short inputs cross the pieces' edges.
inline constexpr size_t kPieceBytes = LOCKSCOPE_CAPTURE_PIECE_BYTES;

// The elements of the array the cursor is at, in pieces of about
// kPieceBytes (whole elements; one element may be bigger), each handed on
// like eachInPiece. consumed is told where each piece read ends. `into`
// (where onElement puts them) is sized before any element is read: a vector
// of big elements grown by doubling copies them into fresh memory at every
// step. A text that is all there is cut to the array's end first, and
// `into` sized for the count; a text read as the cursor gets there (its
// more) is read a piece as soon as it is cut, so that it is never whole in
// memory, and `into` sized for as many elements as the rest of the text
// could hold at the first piece's rate (room never written costs no
// memory). At most 8 bytes of it per byte of the array's text (of the text
// left, while its end is not cut): a hostile array of empty elements
// reserves next to nothing.
template <class T, class F>
void eachElement(od::parser& parser, JsonCursor& c, const char* text_end, std::vector<T>& into, F&& onElement,
    const Consumed& consumed = {})
{
    need(c.take('['));
    if (c.take(']'))
        return;
    const bool whole = !c.readsOn();
    std::vector<Span> cut; // pieces not read yet
    size_t inCut = 0; // elements in them
    bool sized = false;
    auto readCut = [&](bool all) { // all: the array's end is cut
        if (!sized) {
            const auto bytes = static_cast<size_t>(cut.back().end - cut.front().begin);
            const auto left = static_cast<size_t>(text_end - kPadding - cut.front().begin);
            const size_t guess = all ? inCut : inCut * (left / bytes + 1);
            into.reserve(into.size() + std::min(guess, (all ? bytes : left) * 8 / sizeof(T)));
            sized = true;
        }
        for (const Span& p : cut) {
            eachInPiece(parser, p, text_end, onElement);
            if (consumed)
                consumed(p.end);
        }
        cut.clear();
    };
    Span piece = c.value();
    size_t inPiece = 1;
    while (c.take(',')) {
        const Span next = c.value();
        if (static_cast<size_t>(piece.end - piece.begin) < kPieceBytes) {
            piece.end = next.end;
            ++inPiece;
            continue;
        }
        cut.push_back(piece);
        inCut += inPiece;
        piece = next;
        inPiece = 1;
        if (!whole)
            readCut(false);
    }
    need(c.take(']'));
    cut.push_back(piece);
    inCut += inPiece;
    readCut(true);
}

} // namespace lockscope::detail::fast
