// SPDX-License-Identifier: GPL-2.0-or-later
#pragma once

#include <iosfwd>
#include <memory>
#include <string>
#include <string_view>

namespace lockscope::reports {

// An immutable text whose copies share one string. A comparison's
// judgements carry a handful of distinct reasons ("one run on a side: ...")
// over tens of thousands of figures: as strings they were 7 MB of heap for
// the bench's 100k-stack pair. A reason made once (a static, or once per
// comparison) and assigned to each figure is stored once.
class SharedText {
public:
    SharedText() = default;
    SharedText(std::string text); // NOLINT(google-explicit-constructor): a string where a string was
    SharedText(const char* text); // NOLINT(google-explicit-constructor)

    const std::string& str() const noexcept;
    operator const std::string&() const noexcept { return str(); } // NOLINT(google-explicit-constructor)
    bool empty() const noexcept { return !text_; }

    friend bool operator==(const SharedText& a, const SharedText& b) noexcept { return a.str() == b.str(); }
    friend bool operator==(const SharedText& a, std::string_view b) noexcept { return a.str() == b; }

private:
    std::shared_ptr<const std::string> text_; // null: ""
};

std::ostream& operator<<(std::ostream& os, const SharedText& text);

} // namespace lockscope::reports
