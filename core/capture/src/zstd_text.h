// SPDX-License-Identifier: GPL-2.0-or-later
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

// zstd frames around capture text (*.lockscope.json.zst), internal to
// lockscope_capture: the reader recognises them by their magic number, the
// writer compresses when the file name asks for it.
namespace lockscope::detail {

bool isZstd(std::string_view data) noexcept;

// The frames' content; throws CaptureError (one line, no file name) for a
// corrupt or truncated stream, or content larger than maxBytes (a
// decompression bomb is refused as it grows, not after). spare: bytes of
// capacity to leave after the content (the reader's padding).
std::string zstdDecompress(std::string_view data, uint64_t maxBytes, size_t spare = 0);

std::string zstdCompress(std::string_view text);

} // namespace lockscope::detail
