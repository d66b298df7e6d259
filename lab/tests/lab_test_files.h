// SPDX-License-Identifier: GPL-2.0-or-later
#pragma once
// Scratch directories and file reads shared by the lab's unit tests.

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include <unistd.h>

namespace lab_test {

// An empty <tmp>/lockscope-lab-<suite>-<tag>-<pid>, made afresh.
inline std::filesystem::path tempDir(const std::string& suite, const std::string& tag)
{
    auto dir = std::filesystem::temp_directory_path() /
               ("lockscope-lab-" + suite + "-" + tag + "-" + std::to_string(::getpid()));
    std::filesystem::remove_all(dir);
    std::filesystem::create_directories(dir);
    return dir;
}

inline std::string slurp(const std::filesystem::path& p)
{
    std::ifstream in(p, std::ios::binary);
    std::ostringstream s;
    s << in.rdbuf();
    return s.str();
}

} // namespace lab_test
