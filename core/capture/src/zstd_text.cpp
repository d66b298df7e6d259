// SPDX-License-Identifier: GPL-2.0-or-later
#include "zstd_text.h"

#include <zstd.h>
#include <zstd_errors.h>

#include <memory>

#include "lockscope/capture/io.h"

namespace lockscope::detail {
namespace {

// Level 9 with both cores: 3x smaller than level 3 on captures' digit runs,
// and still faster than the JSON writer that feeds it.
constexpr int kLevel = 9;
constexpr int kWorkers = 2;

struct DCtxFree {
    void operator()(ZSTD_DCtx* c) const noexcept { ZSTD_freeDCtx(c); }
};
struct CCtxFree {
    void operator()(ZSTD_CCtx* c) const noexcept { ZSTD_freeCCtx(c); }
};

// libzstd's own wording changes between releases; these stay.
std::string problem(size_t error)
{
    switch (ZSTD_getErrorCode(error)) {
    case ZSTD_error_checksum_wrong: return "checksum mismatch";
    case ZSTD_error_frameParameter_windowTooLarge: return "the frame needs a larger window than allowed";
    case ZSTD_error_prefix_unknown: return "not a zstd frame after the first one";
    case ZSTD_error_dictionary_wrong: return "the frame needs a dictionary";
    default: return "the compressed data is damaged";
    }
}

} // namespace

bool isZstd(std::string_view data) noexcept
{
    return data.size() >= 4 && static_cast<unsigned char>(data[0]) == 0x28
        && static_cast<unsigned char>(data[1]) == 0xb5 && static_cast<unsigned char>(data[2]) == 0x2f
        && static_cast<unsigned char>(data[3]) == 0xfd;
}

std::string zstdDecompress(std::string_view data, uint64_t maxBytes, size_t spare)
{
    std::unique_ptr<ZSTD_DCtx, DCtxFree> ctx(ZSTD_createDCtx());
    if (!ctx)
        throw CaptureError("zstd: out of memory");
    std::string out;
    // The frame header's size, when there, sizes the buffer once (bounded by maxBytes).
    const unsigned long long declared = ZSTD_getFrameContentSize(data.data(), data.size());
    if (declared != ZSTD_CONTENTSIZE_UNKNOWN && declared != ZSTD_CONTENTSIZE_ERROR && declared <= maxBytes)
        out.reserve(static_cast<size_t>(declared) + spare);
    ZSTD_inBuffer in { data.data(), data.size(), 0 };
    std::string chunk(ZSTD_DStreamOutSize(), '\0');
    for (;;) {
        ZSTD_outBuffer o { chunk.data(), chunk.size(), 0 };
        const size_t left = ZSTD_decompressStream(ctx.get(), &o, &in); // 0: a frame just ended
        if (ZSTD_isError(left))
            throw CaptureError("corrupt zstd data: " + problem(left));
        if (out.size() + o.pos > maxBytes)
            throw CaptureError(
                "decompresses to more than the limit of " + std::to_string(maxBytes) + " bytes");
        out.append(chunk.data(), o.pos);
        if (left == 0 && in.pos == in.size)
            break; // the last frame decoded and flushed
        if (in.pos == in.size && o.pos < o.size)
            throw CaptureError("truncated zstd data: the file ends inside a compressed frame");
        // else: more input (another frame may follow), or output still to flush
    }
    return out;
}

std::string zstdCompress(std::string_view text)
{
    std::unique_ptr<ZSTD_CCtx, CCtxFree> ctx(ZSTD_createCCtx());
    if (!ctx)
        throw CaptureError("zstd: out of memory");
    ZSTD_CCtx_setParameter(ctx.get(), ZSTD_c_compressionLevel, kLevel);
    ZSTD_CCtx_setParameter(ctx.get(), ZSTD_c_nbWorkers, kWorkers); // ignored by a single-threaded libzstd
    ZSTD_CCtx_setParameter(ctx.get(), ZSTD_c_checksumFlag, 1);
    std::string out(ZSTD_compressBound(text.size()), '\0');
    const size_t n = ZSTD_compress2(ctx.get(), out.data(), out.size(), text.data(), text.size());
    if (ZSTD_isError(n))
        throw CaptureError(std::string("zstd compression failed: ") + ZSTD_getErrorName(n));
    out.resize(n);
    return out;
}

} // namespace lockscope::detail
