// SPDX-License-Identifier: GPL-2.0-or-later
// libFuzzer target for the capture reader: any input (either layout, plain
// or zstd-compressed) must give a Capture or a CaptureError; the reader
// (simdjson) and the reference reader (nlohmann SAX) must agree on it, the
// same Capture or the same message; and whatever is accepted must survive a
// write/read round trip in both layouts.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <optional>
#include <string>
#include <string_view>

#include "lockscope/capture/io.h"

namespace {

// The capture, or nullopt with the message in error.
template <class Read> std::optional<lockscope::Capture> outcome(Read read, std::string& error)
{
    try {
        return read();
    } catch (const lockscope::CaptureError& e) {
        error = e.what();
        return std::nullopt;
    }
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size)
{
    const std::string_view text(reinterpret_cast<const char*>(data), size);
    std::string error;
    std::string referenceError;
    const auto c = outcome([&] { return lockscope::parseCapture(text); }, error);
    const auto reference = outcome([&] { return lockscope::parseCaptureReference(text); }, referenceError);
    if (c.has_value() != reference.has_value() || error != referenceError || (c && !(*c == *reference)))
        std::abort();
    if (!c)
        return 0;
    // An accepted capture is a fixed point of the writer and the reader.
    const lockscope::Capture back = lockscope::parseCapture(lockscope::toJson(*c).dump());
    if (!(back == *c))
        std::abort();
    const lockscope::Capture compact
        = lockscope::parseCapture(lockscope::toJson(*c, lockscope::CaptureLayout::Compact).dump());
    if (!(compact == *c))
        std::abort();
    return 0;
}
