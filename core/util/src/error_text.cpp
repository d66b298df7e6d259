// SPDX-License-Identifier: GPL-2.0-or-later
#include "lockscope/util/error_text.h"

#include <cstdio>
#include <cstring>

namespace lockscope::util {

std::string printable(std::string_view s, size_t maxLen)
{
    std::string out;
    for (char ch : s) {
        const auto c = static_cast<unsigned char>(ch);
        if (out.size() >= maxLen) {
            out += "...";
            break;
        }
        if (c >= 0x20 && c < 0x7f) {
            out += static_cast<char>(c);
        } else {
            char buf[8];
            (void)std::snprintf(buf, sizeof buf, "\\x%02x", c);
            out += buf;
        }
    }
    return out;
}

std::string errnoText(int e)
{
    char buf[128];
    return strerror_r(e, buf, sizeof buf); // GNU variant: returns the message
}

} // namespace lockscope::util
