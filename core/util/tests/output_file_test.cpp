// SPDX-License-Identifier: GPL-2.0-or-later
// OutputFile's rule (lockscope/util/output_file.h): what is replaced, what is written in
// place, what is refused, and who owns the result.
#include <gtest/gtest.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "lockscope/util/invoking_user.h"
#include "lockscope/util/output_file.h"
#include "scoped_env.h"

namespace lockscope::util {
namespace {

namespace fs = std::filesystem;
using testing::ScopedEnv;

constexpr uid_t kNobody = 65534;

std::string slurp(const std::string& p)
{
    std::ifstream in(p, std::ios::binary);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

std::string errorOf(const std::string& p, const std::string& text = "x")
{
    try {
        writeFileAtomic(p, text);
    } catch (const FileError& e) {
        return e.what();
    }
    return "(written)";
}

class OutputFiles : public ::testing::Test {
protected:
    void SetUp() override
    {
        std::string tmpl = (fs::temp_directory_path() / "lockscope-out-XXXXXX").string();
        ASSERT_NE(::mkdtemp(tmpl.data()), nullptr);
        dir_ = tmpl;
    }
    void TearDown() override { fs::remove_all(dir_); }
    std::string path(const std::string& name) const { return (dir_ / name).string(); }
    size_t entries() const
    {
        return static_cast<size_t>(std::distance(fs::directory_iterator(dir_), fs::directory_iterator {}));
    }
    fs::path dir_;
    // No SUDO_UID/PKEXEC_UID from the environment the tests run in.
    ScopedEnv sudo_ { "SUDO_UID", nullptr }, pkexec_ { "PKEXEC_UID", nullptr };
};

// A private copy of /dev/null's device node: if the writer replaced it, the
// real /dev/null is not what gets broken.
TEST_F(OutputFiles, CharacterDeviceIsWrittenInPlaceNotReplaced)
{
    if (geteuid() != 0)
        GTEST_SKIP() << "skipped: making a device node needs root";
    const std::string p = path("null");
    ASSERT_EQ(::mknod(p.c_str(), S_IFCHR | 0666, makedev(1, 3)), 0) << std::strerror(errno);
    ASSERT_EQ(::chmod(p.c_str(), 0666), 0);  // past the umask
    writeFileAtomic(p, "discarded\n");
    struct stat st { };
    ASSERT_EQ(::lstat(p.c_str(), &st), 0);
    EXPECT_TRUE(S_ISCHR(st.st_mode)) << "the device node was replaced";
    EXPECT_EQ(st.st_rdev, makedev(1, 3));
    EXPECT_EQ(st.st_mode & 07777, 0666u) << "a device keeps its mode";
    EXPECT_EQ(entries(), 1u) << "no temporary file left";
}

TEST_F(OutputFiles, ModeIsTheOneAsked)
{
    const std::string p = path("export.folded");
    writeFileAtomic(p, "a;b;c 3\n", 0640);
    struct stat st { };
    ASSERT_EQ(::stat(p.c_str(), &st), 0);
    EXPECT_EQ(st.st_mode & 07777, 0640u);
    EXPECT_EQ(slurp(p), "a;b;c 3\n");
}

TEST_F(OutputFiles, FifoIsWrittenInPlace)
{
    const std::string p = path("fifo");
    ASSERT_EQ(::mkfifo(p.c_str(), 0600), 0);
    // A reader that does not block, so that opening for writing does not
    // block either (and a writer that replaced the FIFO leaves it empty).
    const int reader = ::open(p.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    ASSERT_GE(reader, 0);
    writeFileAtomic(p, "through the fifo\n");
    char buf[64] = {};
    const ssize_t n = ::read(reader, buf, sizeof buf);
    ::close(reader);
    EXPECT_EQ(std::string(buf, n > 0 ? size_t(n) : 0), "through the fifo\n");
    struct stat st { };
    ASSERT_EQ(::lstat(p.c_str(), &st), 0);
    EXPECT_TRUE(S_ISFIFO(st.st_mode)) << "the FIFO was replaced";
    EXPECT_EQ(entries(), 1u);
}

TEST_F(OutputFiles, DashIsStandardOutput)
{
    const std::string sink = path("stdout.txt");
    const int fd = ::open(sink.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    ASSERT_GE(fd, 0);
    const int saved = ::dup(STDOUT_FILENO);
    ::dup2(fd, STDOUT_FILENO);
    std::string error;
    const auto cwd = fs::current_path();
    fs::current_path(dir_);
    try {
        writeFileAtomic("-", "to stdout\n");
    } catch (const FileError& e) {
        error = e.what();
    }
    fs::current_path(cwd);
    ::dup2(saved, STDOUT_FILENO);
    ::close(saved);
    ::close(fd);
    EXPECT_EQ(error, "");
    EXPECT_EQ(slurp(sink), "to stdout\n");
    EXPECT_FALSE(fs::exists(path("-"))) << "wrote a file named '-'";
}

TEST_F(OutputFiles, OwnSymlinkIsFollowedAndKept)
{
    const std::string target = path("real.json"), link = path("latest.json");
    writeFileAtomic(target, "old");
    fs::create_symlink("real.json", link);
    writeFileAtomic(link, "new");
    EXPECT_TRUE(fs::is_symlink(link)) << "the link was replaced by a file";
    EXPECT_EQ(slurp(target), "new");
    EXPECT_EQ(entries(), 2u);
}

TEST_F(OutputFiles, SymlinkToADeviceWritesThrough)
{
    const std::string link = path("sink");
    fs::create_symlink("/dev/null", link);
    writeFileAtomic(link, "discarded");
    EXPECT_TRUE(fs::is_symlink(link));
    EXPECT_TRUE(fs::is_character_file("/dev/null"));
}

TEST_F(OutputFiles, DanglingSymlinkIsRefused)
{
    const std::string link = path("dangling");
    fs::create_symlink("missing/file.json", link);
    EXPECT_EQ(errorOf(link), link + ": is a symbolic link that leads nowhere: No such file or directory");
    EXPECT_TRUE(fs::is_symlink(link));
    EXPECT_EQ(entries(), 1u);
}

// The /tmp attack: another user's link must not make root write elsewhere.
TEST_F(OutputFiles, SymlinkOfAnotherUserIsRefused)
{
    if (geteuid() != 0)
        GTEST_SKIP() << "skipped: owning a link as another user needs root";
    const std::string target = path("victim"), link = path("planted");
    writeFileAtomic(target, "precious");
    fs::create_symlink(target, link);
    ASSERT_EQ(::lchown(link.c_str(), kNobody, kNobody), 0);
    EXPECT_EQ(errorOf(link), link + ": is a symbolic link owned by another user (uid 65534); not following it: "
                                    "give the path it points to");
    EXPECT_EQ(slurp(target), "precious");
    // Under sudo by that same user, it is theirs: followed.
    ScopedEnv uid("SUDO_UID", "65534"), gid("SUDO_GID", "65534");
    EXPECT_EQ(errorOf(link, "theirs"), "(written)");
    EXPECT_EQ(slurp(target), "theirs");
}

TEST_F(OutputFiles, BlockDevicesAndSocketsAreRefused)
{
    EXPECT_EQ(errorOf("/proc/self/fd"), "/proc/self/fd: is a directory: give a file name to write to");
    if (geteuid() == 0) {
        const std::string p = path("blk");
        ASSERT_EQ(::mknod(p.c_str(), S_IFBLK | 0600, makedev(7, 200)), 0);
        EXPECT_EQ(errorOf(p), p + ": is a block device: give a file name to write to");
        EXPECT_TRUE(fs::is_block_file(p));
    }
}

TEST_F(OutputFiles, BadDirectoryFailsWhenOpenedNotWhenCommitted)
{
    const std::string p = path("no/such/dir/c.json");
    try {
        OutputFile out(p);
        FAIL() << "opened a file in a missing directory";
    } catch (const FileError& e) {
        EXPECT_EQ(std::string(e.what()), p + ": cannot create a temporary file in " + path("no/such/dir")
                + ": No such file or directory");
    }
}

TEST_F(OutputFiles, UncommittedLeavesNothingBehind)
{
    {
        OutputFile out(path("never.json"));
        EXPECT_EQ(entries(), 1u) << "the temporary file exists while the work runs";
    }
    EXPECT_EQ(entries(), 0u);
}

TEST_F(OutputFiles, PiecesAreInPlaceOnlyWhenFinished)
{
    std::ofstream(path("big.json")) << "old";
    {
        OutputFile out(path("big.json"));
        out.append("{\"a\": ");
        out.append("1}\n");
        EXPECT_EQ(slurp(path("big.json")), "old") << "half an output must never be seen";
        out.finish();
    }
    EXPECT_EQ(slurp(path("big.json")), "{\"a\": 1}\n");
    EXPECT_EQ(entries(), 1u);
    {
        OutputFile out(path("big.json"));
        out.append("partial");
    } // abandoned (an error while rendering): the old file stays, no temporary
    EXPECT_EQ(slurp(path("big.json")), "{\"a\": 1}\n");
    EXPECT_EQ(entries(), 1u);
    OutputFile done(path("big.json"));
    done.commit("x");
    EXPECT_THROW(done.append("y"), FileError);
}

// Past the stride (32 MiB) OutputFile syncs what is written on a second
// thread while pieces keep coming: the file must still be exactly the
// pieces in order, and one abandoned mid-sync must leave nothing.
TEST_F(OutputFiles, BigOutputsSyncedBehindStayWhole)
{
    std::string piece(size_t{3} << 20, '\0');
    for (size_t i = 0; i < piece.size(); ++i)
        piece[i] = char('a' + i % 23);
    constexpr int kPieces = 40; // 120 MiB: several syncs behind
    {
        OutputFile out(path("big.json"));
        for (int i = 0; i < kPieces; ++i) {
            piece[0] = char('A' + i % 26); // each piece told apart
            out.append(piece);
        }
        out.finish();
    }
    const std::string written = slurp(path("big.json"));
    ASSERT_EQ(written.size(), piece.size() * kPieces);
    for (int i = 0; i < kPieces; ++i) {
        piece[0] = char('A' + i % 26);
        ASSERT_EQ(written.compare(piece.size() * size_t(i), piece.size(), piece), 0) << "piece " << i;
    }
    {
        OutputFile out(path("big.json"));
        for (int i = 0; i < 12; ++i) // a sync is running or done when it is abandoned
            out.append(piece);
    }
    EXPECT_EQ(fs::file_size(path("big.json")), piece.size() * kPieces) << "the finished file stays";
    EXPECT_EQ(entries(), 1u) << "no temporary file is left";
}

TEST_F(OutputFiles, PiecesGoStraightIntoAFifo)
{
    ASSERT_EQ(::mkfifo(path("pipe").c_str(), 0600), 0);
    const int rd = ::open(path("pipe").c_str(), O_RDONLY | O_NONBLOCK);
    ASSERT_GE(rd, 0);
    OutputFile out(path("pipe"));
    out.append("first ");
    char buf[32] = {};
    EXPECT_EQ(::read(rd, buf, sizeof buf), 6) << "a piece is written when appended, not at finish";
    out.append("second");
    out.finish();
    EXPECT_EQ(::read(rd, buf, sizeof buf), 6);
    ::close(rd);
}

void expectOwned(const std::string& p, uid_t uid, gid_t gid)
{
    struct stat st { };
    ASSERT_EQ(::stat(p.c_str(), &st), 0);
    EXPECT_EQ(st.st_uid, uid) << p;
    EXPECT_EQ(st.st_gid, gid) << p;
    EXPECT_EQ(st.st_mode & 07777, 0600u) << p;
}

TEST_F(OutputFiles, RootWritesForTheSudoUser)
{
    if (geteuid() != 0)
        GTEST_SKIP() << "skipped: handing files to another user needs root";
    ScopedEnv uid("SUDO_UID", "65534"), gid("SUDO_GID", "65533");
    const std::string p = path("e.folded");
    writeFileAtomic(p, "a;b 1\n");
    expectOwned(p, kNobody, 65533);
    // Replacing a root-owned file gives the new one to the user too.
    ::chown(p.c_str(), 0, 0);
    writeFileAtomic(p, "a;b 2\n");
    expectOwned(p, kNobody, 65533);
}

TEST_F(OutputFiles, RootWritesForThePkexecUser)
{
    if (geteuid() != 0)
        GTEST_SKIP() << "skipped: handing files to another user needs root";
    ScopedEnv uid("PKEXEC_UID", "65534");
    const std::string p = path("p.json");
    writeFileAtomic(p, "x");
    // nobody's group from the passwd database.
    expectOwned(p, kNobody, invokingUser()->gid);
    EXPECT_NE(invokingUser()->gid, static_cast<gid_t>(-1));
}

TEST(InvokingUser, OnlyAPlainNonRootIdCounts)
{
    ScopedEnv pk("PKEXEC_UID", nullptr), gid("SUDO_GID", "7");
    for (const char* bad : { "0", "", "12x", "-5", " 12", "99999999999999999999" }) {
        ScopedEnv uid("SUDO_UID", bad);
        EXPECT_FALSE(invokingUser()) << "'" << bad << "'";
    }
    ScopedEnv uid("SUDO_UID", "1234");
    if (geteuid() != 0) {
        EXPECT_FALSE(invokingUser()) << "only root acts for someone else";
    } else {
        ASSERT_TRUE(invokingUser());
        EXPECT_EQ(invokingUser()->uid, 1234u);
        EXPECT_EQ(invokingUser()->gid, 7u);
    }
}

} // namespace
} // namespace lockscope::util
