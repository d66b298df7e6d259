// SPDX-License-Identifier: GPL-2.0-or-later
#pragma once

#include <stdexcept>

namespace lockscope::lab {

// One line for the user: what failed, where, and what to do about it.
class LabError : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

} // namespace lockscope::lab
