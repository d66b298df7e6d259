// SPDX-License-Identifier: GPL-2.0-or-later
// An immutable string stored once per process. Call stacks repeat a few
// thousand function and module names millions of times: a frame holding
// two of these is 16 bytes of pointers instead of two heap strings, copies
// without allocating and compares names by pointer.
#pragma once

#include <compare>
#include <cstddef>
#include <functional>
#include <iosfwd>
#include <string>
#include <string_view>

namespace lockscope {

class InternedString {
public:
    InternedString() noexcept;
    // Interning takes a lock and a hash look-up: keep it off paths that
    // already hold an InternedString (copying one is free).
    InternedString(std::string_view s); // NOLINT(google-explicit-constructor): a string where a string was
    InternedString(const std::string& s) : InternedString(std::string_view(s)) {} // NOLINT(google-explicit-constructor)
    InternedString(const char* s) : InternedString(std::string_view(s)) {} // NOLINT(google-explicit-constructor)

    const std::string& str() const noexcept { return *s_; }
    operator const std::string&() const noexcept { return *s_; } // NOLINT(google-explicit-constructor)
    operator std::string_view() const noexcept { return *s_; }   // NOLINT(google-explicit-constructor)
    const char* c_str() const noexcept { return s_->c_str(); }
    bool empty() const noexcept { return s_->empty(); }
    size_t size() const noexcept { return s_->size(); }
    // Stable for the process's life: a key for maps of names.
    const void* id() const noexcept { return s_; }

    // Equal strings are one object, so equality is identity.
    friend bool operator==(InternedString a, InternedString b) noexcept { return a.s_ == b.s_; }
    friend bool operator==(InternedString a, std::string_view b) noexcept { return *a.s_ == b; }
    friend bool operator==(InternedString a, const std::string& b) noexcept { return *a.s_ == b; }
    friend bool operator==(InternedString a, const char* b) noexcept { return *a.s_ == b; }
    // Ordered by content, as the strings they stand for (stable output).
    friend std::strong_ordering operator<=>(InternedString a, InternedString b) noexcept
    {
        return a.s_ == b.s_ ? std::strong_ordering::equal : *a.s_ <=> *b.s_;
    }
    friend std::strong_ordering operator<=>(InternedString a, std::string_view b) noexcept
    {
        return std::string_view(*a.s_) <=> b;
    }
    friend std::strong_ordering operator<=>(InternedString a, const std::string& b) noexcept { return *a.s_ <=> b; }
    friend std::strong_ordering operator<=>(InternedString a, const char* b) noexcept
    {
        return std::string_view(*a.s_) <=> std::string_view(b);
    }

private:
    const std::string* s_;
};

std::ostream& operator<<(std::ostream& os, InternedString s);

} // namespace lockscope

template <>
struct std::hash<lockscope::InternedString> {
    size_t operator()(lockscope::InternedString s) const noexcept { return std::hash<const void*>()(s.id()); }
};
