// SPDX-License-Identifier: GPL-2.0-or-later
#include "json_pieces.h"

#include <array>
#include <cstring>

namespace lockscope::detail::fast {

bool JsonCursor::refill()
{
    if (!more_)
        return false;
    char* const end = (*more_)();
    if (end == end_)
        return false;
    end_ = end;
    return true;
}

void JsonCursor::skipSpace()
{
    do {
        while (p_ < end_ && (*p_ == ' ' || *p_ == '\n' || *p_ == '\r' || *p_ == '\t'))
            ++p_;
    } while (p_ == end_ && refill());
}

bool JsonCursor::take(char c)
{
    skipSpace();
    if (p_ == end_ || *p_ != c)
        return false;
    ++p_;
    return true;
}

bool JsonCursor::atEnd()
{
    skipSpace();
    return p_ == end_;
}

void JsonCursor::skipString()
{
    const char* const start = ++p_; // past the opening quote
    for (;;) {
        const void* q = std::memchr(p_, '"', static_cast<size_t>(end_ - p_));
        if (!q) {
            p_ = end_;
            need(refill());
            continue;
        }
        const char* quote = static_cast<const char*>(q);
        // Escaped when an odd number of backslashes comes before it.
        size_t backslashes = 0;
        while (quote - backslashes > start && quote[-1 - static_cast<ptrdiff_t>(backslashes)] == '\\')
            ++backslashes;
        p_ += quote - p_ + 1;
        if (backslashes % 2 == 0)
            return;
    }
}

std::string_view JsonCursor::key()
{
    skipSpace();
    need(p_ < end_ && *p_ == '"');
    const char* start = p_ + 1;
    skipString();
    const std::string_view k(start, static_cast<size_t>(p_ - 1 - start));
    need(k.find('\\') == std::string_view::npos);
    need(take(':'));
    return k;
}

namespace {

// The bytes that matter inside an array or object: everything else (numbers,
// literals, commas, colons, whitespace) is passed over in a tight loop.
constexpr std::array<bool, 256> kStructural = [] {
    std::array<bool, 256> t {};
    for (const char c : { '"', '[', ']', '{', '}' })
        t[static_cast<unsigned char>(c)] = true;
    return t;
}();

} // namespace

Span JsonCursor::value()
{
    skipSpace();
    need(p_ < end_);
    char* const begin = p_;
    if (*begin == '"') {
        skipString();
    } else if (*begin == '[' || *begin == '{') {
        size_t depth = 0;
        do {
            do {
                while (p_ < end_ && !kStructural[static_cast<unsigned char>(*p_)])
                    ++p_;
            } while (p_ == end_ && refill());
            need(p_ < end_);
            if (*p_ == '"') {
                skipString();
                continue;
            }
            if (*p_ == '[' || *p_ == '{')
                ++depth;
            else
                --depth; // depth > 0 here: the loop ends when it reaches 0
            ++p_;
        } while (depth > 0);
    } else {
        // A scalar runs to the next separator.
        do {
            while (p_ < end_ && !std::strchr(",]} \n\r\t", *p_))
                ++p_;
        } while (p_ == end_ && refill());
        need(p_ > begin);
    }
    need(p_ < end_ || refill()); // a value is followed by a separator
    return { begin, p_ };
}

} // namespace lockscope::detail::fast
