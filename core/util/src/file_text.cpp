// SPDX-License-Identifier: GPL-2.0-or-later
#include "lockscope/util/file_text.h"

#include <fstream>
#include <sstream>

namespace lockscope::util {

std::string readTextFile(const std::filesystem::path& path)
{
    std::ifstream in(path, std::ios::binary);
    if (!in)
        return {};
    std::ostringstream text;
    text << in.rdbuf();
    return text.str();
}

} // namespace lockscope::util
