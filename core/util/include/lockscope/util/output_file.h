// SPDX-License-Identifier: GPL-2.0-or-later
#pragma once

#include <cstddef>
#include <future>
#include <stdexcept>
#include <string>
#include <string_view>

// The one place lockscope writes an output file (captures, exports, reports,
// imports, the GUI's saves). The rule, decided when the object is made:
//  - "-" is standard output, written as is;
//  - a missing or regular file is written to a temporary file next to it,
//    fsynced and renamed over it, so readers never see half a file (a big
//    one written in pieces is synced behind the writing, every 32 MiB, on
//    a second thread);
//  - a character device (/dev/null, a tty) or a FIFO is written in place,
//    never replaced, and keeps its owner and mode;
//  - a directory, block device or socket is refused;
//  - a symbolic link is followed only if it belongs to root or to the caller
//    (the invoking user under sudo/pkexec, else the real uid): the link
//    stays and what it points to is replaced or written as above. A link
//    owned by anyone else is refused, so root never writes through a link
//    another user planted (in /tmp, say).
// A file made by root for a user (lockscope/util/invoking_user.h) is
// given to that user; its mode is `mode` (0600 by default: captures and
// exports hold kernel addresses). Errors throw FileError.
namespace lockscope::util {

// One line starting with the path, e.g. "out.json: write failed: File too large".
class FileError : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

class OutputFile {
public:
    // Checks the target and, for a file to create or replace, creates the
    // temporary file now: a bad path fails before any work is done.
    explicit OutputFile(const std::string& path, unsigned mode = 0600);
    ~OutputFile();
    OutputFile(const OutputFile&) = delete;
    OutputFile& operator=(const OutputFile&) = delete;

    // Writes content and puts it in place; once only.
    void commit(std::string_view content);
    // The same in pieces, for output too big to hold at once: append writes
    // each piece now (to the temporary file, the device or stdout), finish
    // puts the whole in place. Nothing is in place until finish.
    void append(std::string_view piece);
    void finish();

    bool isStdout() const noexcept { return kind_ == Kind::Stdout; }
    const std::string& path() const noexcept { return path_; }

private:
    enum class Kind { Replace, InPlace, Stdout };
    void decide(unsigned fileType, const std::string& what);
    void createTemporary();
    void openInPlace();
    void finishReplace();
    void flushBehind(size_t written);
    void collectFlush() noexcept;
    void closeFile() noexcept;

    std::string path_, where_;
    std::string target_;  // the file renamed over: path_, or where its link points
    std::string tmp_;
    Kind kind_ = Kind::Replace;
    unsigned mode_;
    int fd_ = -1;
    std::future<int> flushing_; // an fdatasync of what was written, on its own thread: its errno
    size_t unflushed_ = 0; // bytes written since it started
    int flush_error_ = 0;
    bool committed_ = false;
};

// Any text through OutputFile at once: the exporters, the GUI's saves, the
// scaling harness.
void writeFileAtomic(const std::string& path, std::string_view content, unsigned mode = 0600);

} // namespace lockscope::util
