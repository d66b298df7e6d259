// SPDX-License-Identifier: GPL-2.0-or-later
#include "lockscope/util/executable.h"

#include <cstdlib>
#include <string_view>
#include <sys/stat.h>
#include <unistd.h>

namespace lockscope::util {

namespace {

// A directory with its x bit set passes access(X_OK) but cannot be run.
bool isRunnableFile(const std::string& path)
{
    struct stat st {};
    return ::stat(path.c_str(), &st) == 0 && S_ISREG(st.st_mode) && ::access(path.c_str(), X_OK) == 0;
}

} // namespace

std::string findExecutable(const std::string& name)
{
    if (name.empty())
        return {};
    if (name.find('/') != std::string::npos)
        return isRunnableFile(name) ? name : std::string{};
    const char* path = std::getenv("PATH");
    std::string_view rest = path ? path : "/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin";
    while (true) {
        const auto colon = rest.find(':');
        std::string_view dir = rest.substr(0, colon);
        if (dir.empty())
            dir = ".";
        std::string candidate;
        candidate.reserve(dir.size() + 1 + name.size());
        candidate.append(dir).append("/").append(name);
        if (isRunnableFile(candidate))
            return candidate;
        if (colon == std::string_view::npos)
            break;
        rest.remove_prefix(colon + 1);
    }
    return {};
}

} // namespace lockscope::util
