// SPDX-License-Identifier: GPL-2.0-or-later
#include "protobuf.h"

#include <stdexcept>

#include <zlib.h>

namespace lockscope::reports::pb {

void Writer::varint(uint64_t v)
{
    while (v >= 0x80) {
        buf_ += char(uint8_t(v) | 0x80);
        v >>= 7;
    }
    buf_ += char(uint8_t(v));
}

void Writer::varintField(uint32_t field, uint64_t value)
{
    varint(uint64_t(field) << 3 | 0);
    varint(value);
}

void Writer::bytesField(uint32_t field, std::string_view bytes)
{
    varint(uint64_t(field) << 3 | 2);
    varint(bytes.size());
    buf_.append(bytes);
}

void Writer::packedVarints(uint32_t field, const std::vector<uint64_t>& values)
{
    Writer inner;
    for (uint64_t v : values)
        inner.varint(v);
    bytesField(field, inner.buf_);
}

std::string gzip(std::string_view data)
{
    z_stream zs{};
    // windowBits 15 + 16 selects the gzip wrapper.
    if (deflateInit2(&zs, Z_BEST_COMPRESSION, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK)
        throw std::runtime_error("gzip: deflateInit2 failed");
    std::string out(deflateBound(&zs, uLong(data.size())) + 32, '\0');
    zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(data.data()));
    zs.avail_in = uInt(data.size());
    zs.next_out = reinterpret_cast<Bytef*>(out.data());
    zs.avail_out = uInt(out.size());
    const int rc = deflate(&zs, Z_FINISH);
    deflateEnd(&zs);
    if (rc != Z_STREAM_END)
        throw std::runtime_error("gzip: deflate failed (" + std::to_string(rc) + ")");
    out.resize(zs.total_out);
    return out;
}

} // namespace lockscope::reports::pb
