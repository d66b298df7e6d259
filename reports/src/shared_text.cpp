// SPDX-License-Identifier: GPL-2.0-or-later
#include "lockscope/reports/shared_text.h"

#include <ostream>
#include <utility>

namespace lockscope::reports {

SharedText::SharedText(std::string text)
{
    if (!text.empty())
        text_ = std::make_shared<const std::string>(std::move(text));
}

SharedText::SharedText(const char* text)
    : SharedText(std::string(text))
{
}

const std::string& SharedText::str() const noexcept
{
    static const std::string kEmpty;
    return text_ ? *text_ : kEmpty;
}

std::ostream& operator<<(std::ostream& os, const SharedText& text)
{
    return os << text.str();
}

} // namespace lockscope::reports
