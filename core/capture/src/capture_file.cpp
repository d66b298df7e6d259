// SPDX-License-Identifier: GPL-2.0-or-later
// Capture files: readCapture() checks and reads the file before parsing it,
// writeCapture() puts the text in place through util::OutputFile.
#include "lockscope/capture/io.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <utility>

#include "capture_reader.h"
#include "capture_writer.h"
#include "zstd_text.h"
#include "lockscope/util/error_text.h"

namespace lockscope {

using util::errnoText;
using util::printable;

Capture readCapture(const std::string& path, const ReadLimits& limits)
{
    const std::string where = printable(path, 4096);
    auto err = [&](const std::string& what) { return CaptureError(where + ": " + what); };

    // O_NONBLOCK so that opening a FIFO does not wait for a writer.
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
    if (fd < 0)
        throw err(std::string("cannot open: ") + errnoText(errno));
    struct Closer {
        int fd;
        ~Closer() { ::close(fd); }
    } closer { fd };
    struct stat st { };
    if (::fstat(fd, &st) != 0)
        throw err(std::string("cannot stat: ") + errnoText(errno));
    if (!S_ISREG(st.st_mode)) {
        const char* what = S_ISDIR(st.st_mode) ? "a directory"
            : S_ISFIFO(st.st_mode)             ? "a FIFO"
            : S_ISCHR(st.st_mode)              ? "a character device"
            : S_ISBLK(st.st_mode)              ? "a block device"
            : S_ISSOCK(st.st_mode)             ? "a socket"
                                               : "not a regular file";
        throw err(std::string("is ") + what + ", expected a capture file (*.lockscope.json)");
    }
    const auto size = static_cast<uint64_t>(st.st_size);
    if (size > limits.max_file_bytes)
        throw err("file is " + std::to_string(size) + " bytes, larger than the limit of "
            + std::to_string(limits.max_file_bytes) + " bytes");
    if (size == 0)
        throw err("empty file: expected a lockscope capture (JSON)");

    // The text is read as the reader gets to it, from the start again if
    // the reader needs the text it has given back.
    auto load = [&] {
        detail::CaptureText text;
        text.reserve(static_cast<size_t>(size)); // what it is now; grown since, the rest is not read
        text.readFrom(
            [fd, at = uint64_t { 0 }](char* into, size_t room) mutable -> size_t {
                for (;;) {
                    const ssize_t n = ::pread(fd, into, room, static_cast<off_t>(at));
                    if (n >= 0) {
                        at += static_cast<uint64_t>(n);
                        // 0: shrank while reading, the reader will say if it is cut
                        return static_cast<size_t>(n);
                    }
                    if (errno != EINTR)
                        throw CaptureError(std::string("read error: ") + errnoText(errno));
                }
            },
            static_cast<size_t>(size));
        text.more();
        return text;
    };
    try {
        return detail::parseCaptureText(load(), load, limits);
    } catch (const CaptureVersionError& e) {
        throw CaptureVersionError(where + ": " + e.what(), e.found_format, e.found_version);
    } catch (const CaptureError& e) {
        throw err(e.what());
    }
}

bool compressedCapturePath(std::string_view path) noexcept
{
    return path.ends_with(".zst");
}

void writeCapture(const Capture& capture, const WriteOptions& options, bool zstd,
    const util::TextSink& sink)
{
    const bool compact = options.layout == CaptureLayout::Compact;
    try {
        if (zstd) {
            detail::ZstdWriter z(sink);
            detail::serializeCapture(capture, options.pretty, compact, [&](std::string_view p) { z.write(p); });
            z.write("\n");
            z.finish();
        } else {
            detail::serializeCapture(capture, options.pretty, compact, sink);
            sink("\n");
        }
    } catch (const nlohmann::json::exception& e) {
        throw CaptureError(std::string("cannot serialize the capture: ") + e.what());
    }
}

// The text goes to the file as it is made: a big capture is never held a
// second time as text.
void writeCapture(const Capture& capture, util::OutputFile& out, const WriteOptions& options)
{
    const bool zstd = !out.isStdout() && compressedCapturePath(out.path());
    try {
        writeCapture(capture, options, zstd, [&](std::string_view piece) { out.append(piece); });
        out.finish();
    } catch (const util::FileError& e) {
        throw CaptureError(e.what());
    } catch (const CaptureError& e) {
        throw CaptureError(printable(out.path(), 4096) + ": " + e.what());
    }
}

void writeCapture(const Capture& capture, const std::string& path, const WriteOptions& options)
{
    try {
        util::OutputFile out(path, 0600);
        writeCapture(capture, out, options);
    } catch (const util::FileError& e) {
        throw CaptureError(e.what());
    }
}

void writeCapture(const Capture& capture, util::OutputFile& out, bool pretty)
{
    writeCapture(capture, out, WriteOptions { .pretty = pretty });
}

void writeCapture(const Capture& capture, const std::string& path, bool pretty)
{
    writeCapture(capture, path, WriteOptions { .pretty = pretty });
}

} // namespace lockscope
