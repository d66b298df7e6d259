// SPDX-License-Identifier: GPL-2.0-or-later
#pragma once

#include <array>
#include <concepts>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "lockscope/util/interned_string.h"

namespace lockscope::reports::detail {

// Writes JSON straight into a string, laid out as nlohmann's dump(2) lays it
// out except that an array or object holding only scalars is written on one
// line (`[9, 453]`, a call-tree node): a line per value made a big
// comparison's text a third indentation and grep find half a node. A DOM of
// a big comparison's 10k locks cost more than everything else `compare
// --format json` does.
//
// Members must come in nlohmann's order, sorted by key (its objects are
// std::maps); out of order throws std::logic_error. Numbers keep their C++ type's JSON
// type: a double is written as nlohmann writes it ("1.0", "1e-05"), an
// integer as an integer.
class JsonText {
public:
    // Writes at `depth` levels of nesting (a document is 0), as putting the
    // text into an enclosing document there would indent it.
    explicit JsonText(std::string& out, unsigned depth = 0);

    JsonText& object();
    JsonText& array();
    JsonText& end(); // of the innermost object or array
    JsonText& key(std::string_view k); // the next value is this member's

    JsonText& value(std::string_view s);
    JsonText& value(const char* s) { return value(std::string_view(s)); }
    JsonText& value(const std::string& s) { return value(std::string_view(s)); }
    JsonText& value(const InternedString& s) { return value(std::string_view(s.str())); }
    JsonText& value(bool b);
    JsonText& value(double d); // non-finite: null, as nlohmann writes it
    JsonText& value(std::nullptr_t);
    JsonText& value(const nlohmann::json& v); // a document part that is free-form (a workload's results)
    template <std::integral T>
        requires(!std::same_as<T, bool>)
    JsonText& value(T n)
    {
        if constexpr (std::is_signed_v<T>)
            return integer(int64_t(n));
        else
            return unsignedInteger(uint64_t(n));
    }
    template <class T> JsonText& value(const std::optional<T>& v)
    {
        return v ? value(*v) : value(nullptr);
    }
    template <class T> JsonText& value(const std::vector<T>& v)
    {
        array();
        for (const T& e : v)
            value(e);
        return end();
    }
    // key(k).value(v)
    template <class T> JsonText& member(std::string_view k, const T& v) { return key(k).value(v); }

    // The next value's text is appended to the output by the caller (a big
    // array made elsewhere): the writer only counts it as written.
    void external();

private:
    struct Level {
        bool object = false;
        bool empty = true;
        bool one_line = true; // only scalars in it so far
        size_t opened_at = 0; // its bracket's offset in out_
        std::string_view last_key; // keys are literals or outlive their object
    };
    void beforeValue();
    void separate(Level& in);
    void breakLines(); // the innermost level, if one line so far, one value per line
    void open(char bracket, bool object);
    void newline(unsigned depth);
    void tree(const nlohmann::json& v);
    JsonText& integer(int64_t n);
    JsonText& unsignedInteger(uint64_t n);

    std::string& out_;
    unsigned base_;
    std::vector<Level> levels_;
    // Where each member of the innermost level starts while it is one line:
    // only the innermost can be (a container in a level breaks that level).
    std::vector<size_t> members_;
    bool after_key_ = false;
};

// A string as dump() writes it (invalid UTF-8 replaced by U+FFFD).
void putJsonString(std::string& out, std::string_view s);

} // namespace lockscope::reports::detail
