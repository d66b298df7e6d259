// SPDX-License-Identifier: GPL-2.0-or-later
#include "zstd_text.h"

#include <zstd.h>
#include <zstd_errors.h>

#include <algorithm>
#include <cstdint>
#include <memory>

#include "lockscope/capture/io.h"

namespace lockscope::detail {
namespace {

// Level 9 with both cores: 3x smaller than level 3 on captures' digit runs,
// and still faster than the JSON writer that feeds it.
constexpr int kLevel = 9;
constexpr int kWorkers = 2;
// A worker's job holds its input and output at once; libzstd's default job
// at level 9 is 16 MiB (4x the window), and with jobs queued for both
// workers that was 40 MiB of convert's peak. 1-MiB jobs compress as well.
constexpr int kJobBytes = 1 << 20;

struct DCtxFree {
    void operator()(ZSTD_DCtx* c) const noexcept { ZSTD_freeDCtx(c); }
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

// A zstd frame, or a skippable frame ahead of one: pzstd starts each of its
// frames with a skippable one giving its size. (libzstd's own test for both,
// ZSTD_isFrame, is in its static-linking-only API; the magic numbers are not.)
bool isZstd(std::string_view data) noexcept
{
    if (data.size() < 4)
        return false;
    uint32_t magic = 0; // little endian
    for (size_t i = 4; i-- > 0;)
        magic = (magic << 8) | static_cast<unsigned char>(data[i]);
    return magic == ZSTD_MAGICNUMBER || (magic & ZSTD_MAGIC_SKIPPABLE_MASK) == ZSTD_MAGIC_SKIPPABLE_START;
}

CaptureText zstdDecompress(std::string_view data, uint64_t maxBytes)
{
    std::unique_ptr<ZSTD_DCtx, DCtxFree> ctx(ZSTD_createDCtx());
    if (!ctx)
        throw CaptureError("zstd: out of memory");
    CaptureText out;
    // The frame header's size, when there, sizes the buffer once (bounded by maxBytes).
    const unsigned long long declared = ZSTD_getFrameContentSize(data.data(), data.size());
    if (declared != ZSTD_CONTENTSIZE_UNKNOWN && declared != ZSTD_CONTENTSIZE_ERROR && declared <= maxBytes)
        out.reserve(static_cast<size_t>(declared));
    ZSTD_inBuffer in { data.data(), data.size(), 0 };
    for (;;) {
        out.reserve(out.size() + ZSTD_DStreamOutSize());
        // One byte past the limit at most is decoded: enough to know it is passed.
        const uint64_t below = maxBytes - std::min<uint64_t>(maxBytes, out.size());
        const uint64_t room = below == UINT64_MAX ? below : below + 1;
        ZSTD_outBuffer o { out.spare(), static_cast<size_t>(std::min<uint64_t>(out.spareBytes(), room)), 0 };
        const size_t left = ZSTD_decompressStream(ctx.get(), &o, &in); // 0: a frame just ended
        if (ZSTD_isError(left))
            throw CaptureError("corrupt zstd data: " + problem(left));
        if (out.size() + o.pos > maxBytes)
            throw CaptureError(
                "decompresses to more than the limit of " + std::to_string(maxBytes) + " bytes");
        out.grow(o.pos);
        if (left == 0 && in.pos == in.size)
            break; // the last frame decoded and flushed
        if (in.pos == in.size && o.pos < o.size)
            throw CaptureError("truncated zstd data: the file ends inside a compressed frame");
        // else: more input (another frame may follow), or output still to flush
    }
    return out;
}

void ZstdWriter::Free::operator()(ZSTD_CCtx_s* c) const noexcept { ZSTD_freeCCtx(c); }

ZstdWriter::ZstdWriter(util::TextSink sink)
    : ctx_(ZSTD_createCCtx())
    , sink_(std::move(sink))
    , out_(ZSTD_CStreamOutSize(), '\0')
{
    if (!ctx_)
        throw CaptureError("zstd: out of memory");
    ZSTD_CCtx_setParameter(ctx_.get(), ZSTD_c_compressionLevel, kLevel);
    ZSTD_CCtx_setParameter(ctx_.get(), ZSTD_c_nbWorkers, kWorkers); // ignored by a single-threaded libzstd
    ZSTD_CCtx_setParameter(ctx_.get(), ZSTD_c_checksumFlag, 1);
    ZSTD_CCtx_setParameter(ctx_.get(), ZSTD_c_jobSize, kJobBytes); // as nbWorkers, ignored single-threaded
}

ZstdWriter::~ZstdWriter() = default;

void ZstdWriter::write(std::string_view piece) { compress(piece, false); }

void ZstdWriter::finish() { compress({}, true); }

void ZstdWriter::compress(std::string_view piece, bool end)
{
    ZSTD_inBuffer in { piece.data(), piece.size(), 0 };
    for (;;) {
        ZSTD_outBuffer o { out_.data(), out_.size(), 0 };
        const size_t left = ZSTD_compressStream2(ctx_.get(), &o, &in, end ? ZSTD_e_end : ZSTD_e_continue);
        if (ZSTD_isError(left))
            throw CaptureError(std::string("zstd compression failed: ") + ZSTD_getErrorName(left));
        if (o.pos)
            sink_(std::string_view(out_.data(), o.pos));
        // continue: done once the input is taken; end: once nothing is left to flush
        if (end ? left == 0 : in.pos == in.size)
            return;
    }
}

} // namespace lockscope::detail
