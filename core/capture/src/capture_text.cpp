// SPDX-License-Identifier: GPL-2.0-or-later
#include "capture_text.h"

#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <new>
#include <utility>

namespace lockscope::detail {
namespace {

size_t pageSize() noexcept
{
    static const auto page = static_cast<size_t>(::sysconf(_SC_PAGESIZE));
    return page;
}

size_t roundUpToPage(size_t n) noexcept
{
    const size_t page = pageSize();
    return (n + page - 1) / page * page;
}

} // namespace

CaptureText::~CaptureText()
{
    if (base_)
        ::munmap(base_, capacity_);
}

CaptureText::CaptureText(CaptureText&& other) noexcept
    : base_(std::exchange(other.base_, nullptr))
    , size_(std::exchange(other.size_, 0))
    , capacity_(std::exchange(other.capacity_, 0))
    , released_(std::exchange(other.released_, 0))
{
}

CaptureText& CaptureText::operator=(CaptureText&& other) noexcept
{
    if (this != &other) {
        CaptureText gone(std::move(*this));
        base_ = std::exchange(other.base_, nullptr);
        size_ = std::exchange(other.size_, 0);
        capacity_ = std::exchange(other.capacity_, 0);
        released_ = std::exchange(other.released_, 0);
    }
    return *this;
}

void CaptureText::reserve(size_t n)
{
    if (n > SIZE_MAX / 4)
        throw std::bad_alloc();
    if (n + kTextPadding <= capacity_)
        return;
    const size_t want = roundUpToPage(std::max(n + kTextPadding, capacity_ * 2));
    // Untouched pages cost nothing, and mremap moves page tables, not bytes.
    void* p = base_ ? ::mremap(base_, capacity_, want, MREMAP_MAYMOVE)
                    : ::mmap(nullptr, want, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED)
        throw std::bad_alloc();
    base_ = static_cast<char*>(p);
    capacity_ = want;
}

void CaptureText::append(std::string_view bytes)
{
    reserve(size_ + bytes.size());
    if (!bytes.empty())
        std::memcpy(base_ + size_, bytes.data(), bytes.size());
    size_ += bytes.size();
}

char* CaptureText::padded()
{
    reserve(size_);
    std::memset(base_ + size_, ' ', kTextPadding);
    return base_;
}

void CaptureText::release(const char* upTo) noexcept
{
    if (!base_ || upTo <= base_ + released_ || upTo > base_ + size_)
        return;
    const size_t end = static_cast<size_t>(upTo - base_) / pageSize() * pageSize();
    if (end <= released_)
        return;
    // The pages are private and anonymous: MADV_DONTNEED frees them now.
    if (::madvise(base_ + released_, end - released_, MADV_DONTNEED) == 0)
        released_ = end;
}

} // namespace lockscope::detail
