// SPDX-License-Identifier: GPL-2.0-or-later
// libFuzzer target for the capture reader: any input (either layout, plain
// or zstd-compressed) must give a Capture or a CaptureError, and whatever is
// accepted must survive a write/read round trip in both layouts.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "lockscope/capture/io.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size)
{
    const std::string_view text(reinterpret_cast<const char*>(data), size);
    lockscope::Capture c;
    try {
        c = lockscope::parseCapture(text);
    } catch (const lockscope::CaptureError&) {
        return 0;
    }
    // An accepted capture is a fixed point of the writer and the reader.
    const lockscope::Capture back = lockscope::parseCapture(lockscope::toJson(c).dump());
    if (!(back == c))
        std::abort();
    const lockscope::Capture compact
        = lockscope::parseCapture(lockscope::toJson(c, lockscope::CaptureLayout::Compact).dump());
    if (!(compact == c))
        std::abort();
    return 0;
}
