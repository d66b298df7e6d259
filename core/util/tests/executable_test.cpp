// SPDX-License-Identifier: GPL-2.0-or-later
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <unistd.h>

#include "lockscope/util/executable.h"

namespace fs = std::filesystem;

namespace {

// A scratch PATH: a/ holds a directory and a plain file named like the
// program, b/ the program itself; PATH is restored afterwards.
class FindExecutable : public ::testing::Test {
protected:
    void SetUp() override
    {
        dir_ = fs::temp_directory_path() / ("lockscope-util-exe-" + std::to_string(::getpid()));
        fs::remove_all(dir_);
        fs::create_directories(dir_ / "a" / "prog");
        fs::create_directories(dir_ / "b");
        std::ofstream(dir_ / "a" / "plain") << "not executable\n";
        std::ofstream(dir_ / "b" / "prog") << "#!/bin/sh\n";
        std::ofstream(dir_ / "b" / "plain") << "#!/bin/sh\n";
        fs::permissions(dir_ / "b" / "prog", fs::perms::owner_all);
        fs::permissions(dir_ / "b" / "plain", fs::perms::owner_all);
        fs::permissions(dir_ / "a" / "plain", fs::perms::owner_read | fs::perms::owner_write);
        if (const char* p = std::getenv("PATH"))
            saved_ = p;
        ::setenv("PATH", ((dir_ / "a").string() + ":" + (dir_ / "b").string()).c_str(), 1);
    }
    void TearDown() override
    {
        ::setenv("PATH", saved_.c_str(), 1);
        fs::remove_all(dir_);
    }
    fs::path dir_;
    std::string saved_;
};

TEST_F(FindExecutable, SkipsDirectoriesAndFilesItMayNotRun)
{
    // Root may execute a file without x bits set for it only when some x bit
    // is set: a/plain has none, so it is skipped for root too.
    EXPECT_EQ(lockscope::util::findExecutable("prog"), (dir_ / "b" / "prog").string());
    EXPECT_EQ(lockscope::util::findExecutable("plain"), (dir_ / "b" / "plain").string());
}

TEST_F(FindExecutable, NameWithASlashIsTakenAsIs)
{
    EXPECT_EQ(lockscope::util::findExecutable((dir_ / "b" / "prog").string()), (dir_ / "b" / "prog").string());
    EXPECT_EQ(lockscope::util::findExecutable((dir_ / "a" / "prog").string()), "") << "a directory";
    EXPECT_EQ(lockscope::util::findExecutable((dir_ / "nope").string()), "");
}

TEST_F(FindExecutable, UnknownAndEmptyNamesAreNotFound)
{
    EXPECT_EQ(lockscope::util::findExecutable("no-such-program-here"), "");
    EXPECT_EQ(lockscope::util::findExecutable(""), "");
}

TEST_F(FindExecutable, EmptyPathEntryIsTheCurrentDirectory)
{
    ::setenv("PATH", ":", 1);
    const fs::path cwd = fs::current_path();
    fs::current_path(dir_ / "b");
    EXPECT_EQ(lockscope::util::findExecutable("prog"), "./prog");
    fs::current_path(cwd);
}

} // namespace
