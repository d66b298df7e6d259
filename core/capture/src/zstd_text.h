// SPDX-License-Identifier: GPL-2.0-or-later
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "capture_text.h"
#include "lockscope/util/text_sink.h"

struct ZSTD_CCtx_s;

// zstd frames around capture text (*.lockscope.json.zst), internal to
// lockscope_capture: the reader recognises them by their magic number, the
// writer compresses when the file name asks for it.
namespace lockscope::detail {

// zstd's magic number, or a skippable frame's (what pzstd writes first).
bool isZstd(std::string_view data) noexcept;

// The frames' content; throws CaptureError (one line, no file name) for a
// corrupt or truncated stream, or content larger than maxBytes (a
// decompression bomb is refused as it grows, not after).
CaptureText zstdDecompress(std::string_view data, uint64_t maxBytes);

// One zstd frame (with a content checksum) made from text handed in pieces;
// the compressed bytes go to sink as they come, so neither the text nor the
// frame is ever held whole. Throws CaptureError if libzstd fails.
class ZstdWriter {
public:
    explicit ZstdWriter(util::TextSink sink);
    ~ZstdWriter();
    ZstdWriter(const ZstdWriter&) = delete;
    ZstdWriter& operator=(const ZstdWriter&) = delete;

    void write(std::string_view piece);
    void finish(); // ends the frame; once

private:
    void compress(std::string_view piece, bool end);

    struct Free {
        void operator()(ZSTD_CCtx_s* c) const noexcept;
    };
    std::unique_ptr<ZSTD_CCtx_s, Free> ctx_;
    util::TextSink sink_;
    std::string out_;
};

} // namespace lockscope::detail
