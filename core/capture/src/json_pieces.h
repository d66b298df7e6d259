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

class JsonCursor {
public:
    JsonCursor(char* begin, char* end)
        : p_(begin)
        , end_(end)
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

private:
    void skipSpace();
    void skipString(); // from its opening quote to past its closing one

    char* p_;
    char* end_;
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

// The elements of the array whose text is array, in pieces of about
// kPieceBytes (whole elements; one element may be bigger), each handed on
// like eachInPiece. The array is cut before any element is read, so `into`
// (where onElement puts them) is sized first: a vector of big elements grown
// by doubling copies them into fresh memory at every step. At most 8 bytes
// of it per byte of the array's text: a hostile array of empty elements
// reserves next to nothing. consumed is told where each piece read ends.
template <class T, class F>
void eachElement(od::parser& parser, Span array, const char* text_end, std::vector<T>& into, F&& onElement,
    const Consumed& consumed = {})
{
    JsonCursor c(array.begin, array.end);
    need(c.take('['));
    if (c.take(']')) {
        need(c.atEnd());
        return;
    }
    std::vector<Span> pieces;
    size_t count = 1;
    Span piece = c.value();
    while (c.take(',')) {
        const Span next = c.value();
        ++count;
        if (static_cast<size_t>(piece.end - piece.begin) < kPieceBytes) {
            piece.end = next.end;
            continue;
        }
        pieces.push_back(piece);
        piece = next;
    }
    need(c.take(']') && c.atEnd());
    pieces.push_back(piece);
    const auto bytes = static_cast<size_t>(array.end - array.begin);
    into.reserve(into.size() + std::min(count, bytes * 8 / sizeof(T)));
    for (const Span& p : pieces) {
        eachInPiece(parser, p, text_end, onElement);
        if (consumed)
            consumed(p.end);
    }
}

} // namespace lockscope::detail::fast
