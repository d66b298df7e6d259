// SPDX-License-Identifier: GPL-2.0-or-later
#include "lockscope/util/output_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <climits>
#include <cstdlib>
#include <system_error>

#include "lockscope/util/error_text.h"
#include "lockscope/util/invoking_user.h"

namespace lockscope::util {
namespace {

// 0 on success, else the errno of the failed write.
int writeAll(int fd, std::string_view content) noexcept
{
    size_t done = 0;
    while (done < content.size()) {
        const ssize_t n = ::write(fd, content.data() + done, content.size() - done);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            return errno;
        }
        done += static_cast<size_t>(n);
    }
    return 0;
}

const char* typeName(unsigned type)
{
    switch (type) {
    case S_IFDIR:
        return "a directory";
    case S_IFBLK:
        return "a block device";
    case S_IFSOCK:
        return "a socket";
    case S_IFCHR:
        return "a character device";
    case S_IFIFO:
        return "a FIFO";
    default:
        return "not a regular file";
    }
}

std::string directoryOf(const std::string& path)
{
    const auto slash = path.rfind('/');
    return slash == std::string::npos ? "." : (slash == 0 ? "/" : path.substr(0, slash));
}

} // namespace

OutputFile::OutputFile(const std::string& path, unsigned mode) : path_(path), where_(printable(path, 4096)), mode_(mode)
{
    if (path == "-") {
        kind_ = Kind::Stdout;
        if (::fcntl(STDOUT_FILENO, F_GETFL) < 0)
            throw FileError("-: standard output is closed");
        return;
    }
    if (path.empty())
        throw FileError("an empty output file name");
    target_ = path;
    struct stat st { };
    if (::lstat(path.c_str(), &st) != 0) {
        if (errno != ENOENT)
            throw FileError(where_ + ": cannot check the file: " + errnoText(errno));
        createTemporary();
        return;
    }
    if (S_ISLNK(st.st_mode)) {
        const auto user = invokingUser();
        const uid_t caller = user ? user->uid : ::getuid();
        if (st.st_uid != 0 && st.st_uid != caller)
            throw FileError(where_ + ": is a symbolic link owned by another user (uid " + std::to_string(st.st_uid)
                + "); not following it: give the path it points to");
        if (::stat(path.c_str(), &st) != 0)
            throw FileError(where_ + ": is a symbolic link that leads nowhere: " + errnoText(errno));
        if (S_ISREG(st.st_mode)) {
            char* real = ::realpath(path.c_str(), nullptr);
            if (!real)
                throw FileError(where_ + ": cannot resolve the symbolic link: " + errnoText(errno));
            target_ = real;
            std::free(real);
        }
    }
    decide(st.st_mode & S_IFMT, typeName(st.st_mode & S_IFMT));
}

void OutputFile::decide(unsigned fileType, const std::string& what)
{
    if (fileType == S_IFREG) {
        createTemporary();
    } else if (fileType == S_IFCHR || fileType == S_IFIFO) {
        kind_ = Kind::InPlace;
        if (::faccessat(AT_FDCWD, path_.c_str(), W_OK, AT_EACCESS) != 0)
            throw FileError(where_ + ": cannot write to " + what + ": " + errnoText(errno));
    } else {
        throw FileError(where_ + ": is " + what + ": give a file name to write to");
    }
}

void OutputFile::createTemporary()
{
    const std::string dir = directoryOf(target_);
    const std::string base = target_.substr(target_.rfind('/') == std::string::npos ? 0 : target_.rfind('/') + 1);
    if (base.empty())
        throw FileError(where_ + ": not a file name (ends with '/')");
    // Next to the target so that rename() is atomic.
    tmp_ = (dir == "/" ? "" : dir) + "/." + base + ".tmp.XXXXXX";
    fd_ = ::mkostemp(tmp_.data(), O_CLOEXEC);
    if (fd_ < 0) {
        const int e = errno;
        tmp_.clear();
        throw FileError(where_ + ": cannot create a temporary file in " + printable(dir, 4096) + ": " + errnoText(e));
    }
    if (::fchmod(fd_, static_cast<mode_t>(mode_)) != 0)
        throw FileError(where_ + ": cannot set the file mode: " + errnoText(errno));
    if (const auto user = invokingUser(); user && ::fchown(fd_, user->uid, user->gid) != 0)
        throw FileError(where_ + ": cannot give the file to uid " + std::to_string(user->uid) + ": "
            + errnoText(errno));
}

OutputFile::~OutputFile()
{
    closeFile();
    if (!committed_ && !tmp_.empty())
        ::unlink(tmp_.c_str());
}

void OutputFile::commit(std::string_view content)
{
    append(content);
    finish();
}

void OutputFile::append(std::string_view piece)
{
    if (committed_)
        throw FileError(where_ + ": written twice");
    if (kind_ == Kind::Stdout) {
        if (const int e = writeAll(STDOUT_FILENO, piece))
            throw FileError("-: cannot write to standard output: " + errnoText(e));
        return;
    }
    if (kind_ == Kind::InPlace && fd_ < 0)
        openInPlace();
    if (const int e = writeAll(fd_, piece)) {
        closeFile();
        throw FileError(where_ + ": write failed: " + errnoText(e));
    }
    if (kind_ == Kind::Replace)
        flushBehind(piece.size());
}

void OutputFile::flushBehind(size_t written)
{
    // finish() fsyncs before the rename, and under a hypervisor a flush
    // costs about as much as the data it carries (0.26 s for 378 MB on a
    // PVM guest): a big output would wait for all of it at the end. Syncing
    // what is written so far on a second thread, while the caller makes the
    // rest, leaves only the last stretch to finish().
    constexpr size_t kStride = size_t{32} << 20;
    unflushed_ += written;
    if (unflushed_ < kStride)
        return;
    if (flushing_.valid() && flushing_.wait_for(std::chrono::seconds(0)) != std::future_status::ready)
        return;
    collectFlush();
    unflushed_ = 0;
    try {
        flushing_ = std::async(std::launch::async, [fd = fd_] { return ::fdatasync(fd) == 0 ? 0 : errno; });
    } catch (const std::system_error&) {
        // No thread to spare: finish() syncs it all.
    }
}

void OutputFile::collectFlush() noexcept
{
    if (!flushing_.valid())
        return;
    if (const int e = flushing_.get(); e != 0 && flush_error_ == 0)
        flush_error_ = e;
}

void OutputFile::closeFile() noexcept
{
    collectFlush(); // its fd must stay open until it is done
    if (fd_ >= 0)
        ::close(fd_);
    fd_ = -1;
}

void OutputFile::finish()
{
    if (committed_)
        throw FileError(where_ + ": written twice");
    if (kind_ == Kind::Replace) {
        finishReplace();
        return;
    }
    closeFile();
    committed_ = true;
}

void OutputFile::openInPlace()
{
    // No O_CREAT: this writes onto the device or FIFO that was checked, never a new file.
    const int fd = ::open(path_.c_str(), O_WRONLY | O_NOCTTY | O_CLOEXEC);
    if (fd < 0)
        throw FileError(where_ + ": cannot open: " + errnoText(errno));
    struct stat st { };
    if (::fstat(fd, &st) != 0 || !(S_ISCHR(st.st_mode) || S_ISFIFO(st.st_mode))) {
        ::close(fd);
        throw FileError(where_ + ": changed while lockscope ran; nothing written");
    }
    fd_ = fd;
}

void OutputFile::finishReplace()
{
    if (fd_ < 0)
        throw FileError(where_ + ": write failed earlier; not replaced");
    collectFlush();
    const int e = flush_error_ != 0 ? flush_error_ : (::fsync(fd_) == 0 ? 0 : errno);
    if (e != 0) {
        closeFile();
        throw FileError(where_ + ": fsync failed: " + errnoText(e));
    }
    const int closed = ::close(fd_);
    fd_ = -1;
    if (closed != 0)
        throw FileError(where_ + ": close failed: " + errnoText(errno));
    // Something else may have appeared at the path meanwhile: rename would
    // replace a device or FIFO. Keep the finished file then, and say where.
    struct stat st { };
    if (::lstat(target_.c_str(), &st) == 0 && !S_ISREG(st.st_mode) && !S_ISLNK(st.st_mode)) {
        committed_ = true;
        throw FileError(where_ + ": became " + typeName(st.st_mode & S_IFMT) + " meanwhile; not replaced, the "
            + "output is in " + printable(tmp_, 4096));
    }
    if (::rename(tmp_.c_str(), target_.c_str()) != 0)
        throw FileError(where_ + ": cannot replace the file: " + errnoText(errno));
    committed_ = true;
    // Make the rename itself durable; a failure here leaves a complete file.
    const int dfd = ::open(directoryOf(target_).c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dfd >= 0) {
        (void)::fsync(dfd);
        ::close(dfd);
    }
}

void writeFileAtomic(const std::string& path, std::string_view content, unsigned mode)
{
    OutputFile(path, mode).commit(content);
}

} // namespace lockscope::util
