// SPDX-License-Identifier: GPL-2.0-or-later
#pragma once

#include <cstddef>
#include <functional>
#include <string_view>

// A capture's text in memory of its own (internal to lockscope_capture),
// with kTextPadding readable bytes after it for simdjson. The fast reader
// takes the big arrays a piece at a time, and the pages of text before a
// piece it has read are given back (release): a version 1 file is bigger
// than the model read from it, and text and model were held whole side by
// side (core/capture/bench/README.md). A text can also be read from its
// source as the reader gets to it (readFrom, more), so that it is never
// whole in memory at all. Anonymous mmap rather than malloc,
// whose blocks cannot be given back in the middle. A small text (up to
// kKeptBytes mapped) is not given back: its mapping is kept for the same
// thread's next text, so a thread reading many small files (a run set)
// faults their pages in once.
namespace lockscope::detail {

// What the fast reader may read past the end of the text.
inline constexpr size_t kTextPadding = 64;
// A text mapped in at most this many bytes is neither given back in pieces
// nor unmapped: the thread's next text reuses the mapping.
inline constexpr size_t kKeptBytes = size_t{8} << 20;

#ifndef LOCKSCOPE_CAPTURE_LOAD_BYTES
#define LOCKSCOPE_CAPTURE_LOAD_BYTES (size_t { 4 } << 20)
#endif
// What more() reads at a time: a few of the fast reader's pieces. The fuzz
// build reads a few dozen bytes (core/capture/fuzz), so that its short
// inputs cross the reads' edges.
inline constexpr size_t kLoadBytes = LOCKSCOPE_CAPTURE_LOAD_BYTES;

// Where a text read on demand comes from: puts at most room bytes at into
// and says how many (0: there are no more); throws CaptureError (one line,
// no file name) when it cannot read.
using TextSource = std::function<size_t(char* into, size_t room)>;

class CaptureText {
public:
    CaptureText() = default;
    ~CaptureText();
    CaptureText(CaptureText&& other) noexcept;
    CaptureText& operator=(CaptureText&& other) noexcept;
    CaptureText(const CaptureText&) = delete;
    CaptureText& operator=(const CaptureText&) = delete;

    // Room for n bytes of text and the padding (grows at least twofold);
    // throws std::bad_alloc when the address space is short.
    void reserve(size_t n);
    void append(std::string_view bytes);
    // Bytes writable after the text (before the padding), and taking n of them as text.
    char* spare() noexcept { return base_ + size_; }
    size_t spareBytes() const noexcept
    {
        return capacity_ > kTextPadding + size_ ? capacity_ - kTextPadding - size_ : 0;
    }
    void grow(size_t n) noexcept { size_ += n; }

    char* data() noexcept { return base_; }
    size_t size() const noexcept { return size_; }
    std::string_view view() const noexcept { return { base_, size_ }; }
    // Bytes readable from data(): the text, the room reserved after it and the padding.
    size_t readable() const noexcept { return capacity_; }

    // The rest of the text, total bytes at most, is read from source as it
    // is asked for, into the room reserve() made (the text never moves while
    // it is read; what the source has beyond that room is not read).
    void readFrom(TextSource source, size_t total)
    {
        source_ = total > 0 ? std::move(source) : TextSource {};
        left_ = total;
    }
    // There may be more to read: a text read whole by its first read does not read on.
    bool readsOn() const noexcept { return static_cast<bool>(source_); }
    // Reads up to atMost more bytes; false when nothing more came (the
    // source is then let go).
    bool more(size_t atMost = kLoadBytes);
    void readAll()
    {
        while (more(SIZE_MAX)) { }
    }

    // Gives back the whole pages before upTo (inside the text) of a text
    // mapped in more than kKeptBytes; they read as zeros after. released()
    // says whether any page went.
    void release(const char* upTo) noexcept;
    bool released() const noexcept { return released_ > 0; }

private:
    char* base_ = nullptr;
    size_t size_ = 0;
    size_t capacity_ = 0; // mapped bytes, the padding included
    size_t released_ = 0; // bytes given back from base_
    TextSource source_; // empty once it has no more
    size_t left_ = 0; // bytes it may still give
};

} // namespace lockscope::detail
