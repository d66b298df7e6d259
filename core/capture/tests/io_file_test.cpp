// SPDX-License-Identifier: GPL-2.0-or-later
#include <gtest/gtest.h>

#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lockscope/capture/io.h"
#include "lockscope/util/output_file.h"
#include "sample_capture.h"

namespace lockscope {
namespace {

namespace fs = std::filesystem;

class CaptureFiles : public ::testing::Test {
protected:
    void SetUp() override
    {
        std::string tmpl = (fs::temp_directory_path() / "lockscope-io-XXXXXX").string();
        ASSERT_NE(::mkdtemp(tmpl.data()), nullptr);
        dir_ = tmpl;
    }
    void TearDown() override { fs::remove_all(dir_); }

    std::string path(const std::string& name) const { return (dir_ / name).string(); }

    static std::string slurp(const std::string& p)
    {
        std::ifstream in(p, std::ios::binary);
        std::stringstream ss;
        ss << in.rdbuf();
        return ss.str();
    }

    static std::string errorOf(const std::string& p, const ReadLimits& limits = {})
    {
        try {
            readCapture(p, limits);
        } catch (const CaptureError& e) {
            return e.what();
        }
        return "(accepted)";
    }

    size_t entries() const
    {
        return static_cast<size_t>(std::distance(fs::directory_iterator(dir_), fs::directory_iterator {}));
    }

    fs::path dir_;
};

TEST_F(CaptureFiles, WriteThenReadRoundTripsWithMode0600)
{
    const Capture c = testing::makeSemopCapture(testing::SemopScenario::Patched);
    for (bool pretty : { false, true }) {
        const std::string p = path(pretty ? "pretty.lockscope.json" : "compact.lockscope.json");
        ::umask(022);
        writeCapture(c, p, pretty);
        struct stat st { };
        ASSERT_EQ(::stat(p.c_str(), &st), 0);
        EXPECT_EQ(st.st_mode & 07777, 0600u) << "captures hold kernel addresses";
        EXPECT_EQ(readCapture(p), c);
        EXPECT_EQ(slurp(p).back(), '\n');
    }
    EXPECT_EQ(entries(), 2u) << "no temporary files left behind";
}

TEST_F(CaptureFiles, OverwriteReplacesAndKeepsMode)
{
    const std::string p = path("c.lockscope.json");
    writeCapture(testing::makeSemopCapture(testing::SemopScenario::Baseline), p);
    ::chmod(p.c_str(), 0644);
    writeCapture(testing::makeSemopCapture(testing::SemopScenario::Patched), p);
    EXPECT_EQ(readCapture(p).meta.label, "patched");
    struct stat st { };
    ASSERT_EQ(::stat(p.c_str(), &st), 0);
    EXPECT_EQ(st.st_mode & 07777, 0600u);
}

// readCapture names the file and keeps the error's type and its facts.
TEST_F(CaptureFiles, VersionErrorKeepsItsTypeWithThePath)
{
    auto doc = toJson(testing::makeSemopCapture(testing::SemopScenario::Baseline));
    doc["version"] = 3;
    const std::string p = path("v3.lockscope.json");
    std::ofstream(p) << doc.dump();
    try {
        readCapture(p);
        FAIL() << "accepted";
    } catch (const CaptureVersionError& e) {
        EXPECT_EQ(std::string(e.what()), p + ": format version 3 is newer than this lockscope reads (2): upgrade lockscope");
        EXPECT_EQ(e.found_version, "3");
        EXPECT_TRUE(e.isCapture());
    }
}

TEST_F(CaptureFiles, MissingDirectoryFailsWithPathAndReason)
{
    const std::string p = path("no/such/dir/c.lockscope.json");
    try {
        writeCapture(testing::makeSemopCapture(testing::SemopScenario::Baseline), p);
        FAIL() << "write into a missing directory succeeded";
    } catch (const CaptureError& e) {
        EXPECT_EQ(std::string(e.what()),
            p + ": cannot create a temporary file in " + path("no/such/dir") + ": No such file or directory");
    }
}

// Root ignores permission bits, so make the write itself fail: a file size
// limit makes write() return EFBIG for root too.
TEST_F(CaptureFiles, FailedWriteLeavesTheExistingFileIntact)
{
    const std::string p = path("keep.lockscope.json");
    const Capture old = testing::makeSemopCapture(testing::SemopScenario::Baseline);
    writeCapture(old, p);
    const std::string before = slurp(p);

    rlimit saved {};
    ASSERT_EQ(::getrlimit(RLIMIT_FSIZE, &saved), 0);
    auto* oldHandler = std::signal(SIGXFSZ, SIG_IGN);
    rlimit small = saved;
    small.rlim_cur = 1000;
    ASSERT_EQ(::setrlimit(RLIMIT_FSIZE, &small), 0);
    std::string message;
    try {
        writeCapture(testing::makeSemopCapture(testing::SemopScenario::Patched), p);
    } catch (const CaptureError& e) {
        message = e.what();
    }
    ::setrlimit(RLIMIT_FSIZE, &saved);
    std::signal(SIGXFSZ, oldHandler);

    EXPECT_EQ(message, p + ": write failed: File too large");
    EXPECT_EQ(slurp(p), before);
    EXPECT_EQ(readCapture(p), old);
    EXPECT_EQ(entries(), 1u) << "the temporary file must be removed";
}

TEST_F(CaptureFiles, WritingOntoADirectoryIsRefusedUpFront)
{
    const std::string p = path("adir");
    fs::create_directory(p);
    fs::create_directory(p + "/inside");
    try {
        util::OutputFile out(p);
        FAIL() << "accepted a directory";
    } catch (const util::FileError& e) {
        EXPECT_EQ(std::string(e.what()), p + ": is a directory: give a file name to write to");
    }
    EXPECT_TRUE(fs::is_directory(p + "/inside"));
    EXPECT_EQ(entries(), 1u) << "no temporary file made";
}

TEST_F(CaptureFiles, RefusesNonRegularFiles)
{
    EXPECT_EQ(errorOf(dir_.string()),
        dir_.string() + ": is a directory, expected a capture file (*.lockscope.json)");
    const std::string fifo = path("fifo");
    ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
    // Must not block waiting for a writer.
    EXPECT_EQ(errorOf(fifo), fifo + ": is a FIFO, expected a capture file (*.lockscope.json)");
    EXPECT_EQ(
        errorOf("/dev/null"), "/dev/null: is a character device, expected a capture file (*.lockscope.json)");
    EXPECT_EQ(
        errorOf("/dev/zero"), "/dev/zero: is a character device, expected a capture file (*.lockscope.json)");
}

TEST_F(CaptureFiles, MissingFileAndSizeLimit)
{
    EXPECT_EQ(errorOf(path("nope.json")), path("nope.json") + ": cannot open: No such file or directory");
    const std::string p = path("big.lockscope.json");
    writeCapture(testing::makeSemopCapture(testing::SemopScenario::Baseline), p);
    const auto size = fs::file_size(p);
    EXPECT_EQ(errorOf(p, ReadLimits { 1000, 32 }),
        p + ": file is " + std::to_string(size) + " bytes, larger than the limit of 1000 bytes");
    EXPECT_EQ(errorOf(p, ReadLimits { size, 32 }), "(accepted)");
    const std::string empty = path("empty.json");
    std::ofstream(empty).close();
    EXPECT_EQ(errorOf(empty), empty + ": empty file: expected a lockscope capture (JSON)");
}

TEST_F(CaptureFiles, ErrorMessagesStayOneLineForHostilePaths)
{
    const std::string p = path("evil\nname.json");
    const std::string m = errorOf(p);
    EXPECT_EQ(m.find('\n'), std::string::npos);
    EXPECT_NE(m.find("evil\\x0aname.json: cannot open"), std::string::npos);
}

} // namespace
} // namespace lockscope
