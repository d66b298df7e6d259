// SPDX-License-Identifier: GPL-2.0-or-later
#pragma once

// Numeric option checks with messages a user can act on. CLI11 2.1's Range
// says "Value abc not in range 0.000000 to 1797693134862315708...", prints
// bounds below 1e-6 as 0.000000, and lets "nan" through; these name the
// bounds as they are written and say when a word is not a number at all.

#include <CLI/CLI.hpp>

#include <cmath>
#include <sstream>
#include <string>
#include <type_traits>

namespace lockscope::cli {

namespace detail {
template <typename T> std::string bound(T v)
{
    if constexpr (std::is_integral_v<T>) {
        return std::to_string(v);
    } else {
        std::ostringstream text; // the default format is %g's: 1e-12, 0.5, 1e+09
        text << static_cast<double>(v);
        return text.str();
    }
}

// "" when `text` reads as a T; else what it is not.
template <typename T> std::string readNumber(const std::string& text, T& value)
{
    const bool read = CLI::detail::lexical_cast(text, value);
    if constexpr (std::is_integral_v<T>)
        return read ? "" : text + " is not a whole number";
    else
        return read && std::isfinite(value) ? "" : text + " is not a number";
}
} // namespace detail

// MIN <= value <= MAX, read as the option's type T.
template <typename T> CLI::Validator within(T min, T max)
{
    return CLI::Validator(
        [min, max](std::string& text) -> std::string {
            T value{};
            if (std::string bad = detail::readNumber(text, value); !bad.empty())
                return bad;
            if (value < min || value > max)
                return text + " is not between " + detail::bound(min) + " and " + detail::bound(max);
            return {};
        },
        "in [" + detail::bound(min) + " - " + detail::bound(max) + "]");
}

namespace detail {
// Above zero, or at least zero when zero is allowed.
inline CLI::Validator fromZero(bool zero_allowed, const char* description)
{
    return CLI::Validator(
        [zero_allowed](std::string& text) -> std::string {
            double value = 0;
            if (std::string bad = readNumber(text, value); !bad.empty())
                return bad;
            if (value > 0 || (zero_allowed && value == 0))
                return {};
            return text + (zero_allowed ? " is below 0" : " is not above 0");
        },
        description);
}
} // namespace detail

// A number above zero (seconds, intervals).
inline CLI::Validator positive() { return detail::fromZero(false, "POSITIVE"); }

// Zero or more.
inline CLI::Validator nonNegative() { return detail::fromZero(true, "NONNEGATIVE"); }

} // namespace lockscope::cli
