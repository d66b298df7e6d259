// SPDX-License-Identifier: GPL-2.0-or-later
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <utility>

#include <nlohmann/json.hpp>

#include "lockscope/capture/capture.h"
#include "lockscope/util/output_file.h"
#include "lockscope/util/text_sink.h"

namespace lockscope {

// Raised for any problem with a capture file. what() is one line naming the
// file (when known) and the JSON path of the first bad field, e.g.
// "a.json: locks[3].wait.hist: expected 64 integers, got 12".
class CaptureError : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

// The file's "format" or "version" is not what this lockscope reads: another
// tool's JSON, or a capture written in a newer (or an invalid) format
// version. Carries what the file says next to what this build reads, so that
// a caller holding several files can word the mismatch between them without
// reading any file again.
class CaptureVersionError : public CaptureError {
public:
    CaptureVersionError(const std::string& what, std::string foundFormat, std::string foundVersion)
        : CaptureError(what)
        , found_format(std::move(foundFormat))
        , found_version(std::move(foundVersion))
    {
    }

    // "format" as the file has it ("" when absent or not a string).
    std::string found_format;
    // "version" as the file has it: "2", "-3"; a value that is not a number
    // as an error message shows it ("a string \"1\""); "" when absent.
    std::string found_version;
    int supported_version = kCaptureVersionNewest; // the newest this lockscope reads (it reads every one from 1)

    // A lockscope capture, only in another format version.
    bool isCapture() const { return found_format == kCaptureFormat; }
};

struct ReadLimits {
    uint64_t max_file_bytes = 1ull << 30;  // refuse larger files before reading them
    unsigned max_depth = 32;               // JSON nesting (the format needs < 10)
};

// How writeCapture lays a capture out: version 1 (every frame and bucket
// spelled out), or the compact version 2. Either is zstd-compressed when the
// path ends in ".zst" (*.lockscope.json.zst); readCapture recognises both
// layouts and compressed files by their content.
enum class CaptureLayout { Full, Compact };

struct WriteOptions {
    bool pretty = false;
    CaptureLayout layout = CaptureLayout::Full;
};

// True when path names a zstd-compressed capture (ends in ".zst").
bool compressedCapturePath(std::string_view path) noexcept;

// Model <-> JSON. fromJson validates every field and cross-reference and
// throws CaptureError with the JSON path of the first problem.
nlohmann::json toJson(const Capture& capture);
nlohmann::json toJson(const Capture& capture, CaptureLayout layout);
Capture fromJson(const nlohmann::json& doc);

// Parses and validates text (no file involved); errors carry no file name.
Capture parseCapture(std::string_view text, const ReadLimits& limits = {});

// The reference reader (nlohmann/json SAX): the same result and the same
// errors as parseCapture, several times slower. parseCapture hands it the
// inputs its fast path declines (so it words every error); tests, the fuzzer
// and the bench compare the two.
Capture parseCaptureReference(std::string_view text, const ReadLimits& limits = {});

// Reads a capture file. Errors: "<path>: <problem>".
Capture readCapture(const std::string& path, const ReadLimits& limits = {});

// Writes through util::OutputFile (lockscope/util/output_file.h: temp file +
// fsync + rename for a regular file, in place for a device, FIFO or "-")
// with mode 0600, since captures hold kernel addresses. Throws CaptureError
// (a util::FileError's message as it is).
void writeCapture(const Capture& capture, const std::string& path, bool pretty = false);
// The same into an OutputFile opened earlier (record checks -o before it starts).
void writeCapture(const Capture& capture, util::OutputFile& out, bool pretty = false);
void writeCapture(const Capture& capture, const std::string& path, const WriteOptions& options);
void writeCapture(const Capture& capture, util::OutputFile& out, const WriteOptions& options);

// The text a capture file holds, handed to sink in pieces of about a MiB as
// it is made (a network response, a pipe), as one zstd frame when zstd is set.
// Throws CaptureError for what JSON cannot hold; whatever sink throws passes.
void writeCapture(const Capture& capture, const WriteOptions& options, bool zstd,
    const util::TextSink& sink);

} // namespace lockscope
