// SPDX-License-Identifier: GPL-2.0-or-later
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

// The few protobuf wire-format primitives pprof's profile.proto needs
// (varint and length-delimited fields), so no protobuf dependency is needed.
namespace lockscope::reports::pb {

class Writer {
public:
    void varintField(uint32_t field, uint64_t value);
    void int64Field(uint32_t field, int64_t value) { varintField(field, uint64_t(value)); }
    void bytesField(uint32_t field, std::string_view bytes);
    void messageField(uint32_t field, const Writer& message) { bytesField(field, message.buf_); }
    void packedVarints(uint32_t field, const std::vector<uint64_t>& values);
    const std::string& data() const noexcept { return buf_; }

private:
    void varint(uint64_t v);
    std::string buf_;
};

// gzip (RFC 1952) of data; throws std::runtime_error when zlib fails.
std::string gzip(std::string_view data);

} // namespace lockscope::reports::pb
