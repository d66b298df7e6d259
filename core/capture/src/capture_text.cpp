// SPDX-License-Identifier: GPL-2.0-or-later
#include "capture_text.h"

#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <array>
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

// A reader thread reads file after file (a run set's hundred captures):
// the mappings of small texts are kept for the thread's next ones, whose
// pages are then in memory already. Under a hypervisor a page fault is
// dear, and 2 x 100 files of 2 MB faulted in ~100k pages a comparison.
// Two: a compressed file's bytes and the text they decompress to. Texts
// this small are not given back piece by piece either: that is for big
// files, bigger than the model read from them.
class KeptMappings {
public:
    KeptMappings() = default;
    KeptMappings(const KeptMappings&) = delete;
    KeptMappings& operator=(const KeptMappings&) = delete;
    ~KeptMappings()
    {
        for (const Slot& s : slots_)
            if (s.base)
                ::munmap(s.base, s.capacity);
    }
    // The smallest kept mapping of at least n bytes, handed over; false if none.
    bool take(size_t n, char*& base, size_t& capacity) noexcept
    {
        Slot* best = nullptr;
        for (Slot& s : slots_)
            if (s.base && s.capacity >= n && (!best || s.capacity < best->capacity))
                best = &s;
        if (!best)
            return false;
        base = std::exchange(best->base, nullptr);
        capacity = std::exchange(best->capacity, 0);
        return true;
    }
    // Keeps a mapping in an empty slot, or in place of a smaller one
    // (unmapped); false when it is not kept.
    bool keep(char* base, size_t capacity) noexcept
    {
        Slot* smallest = &slots_[0];
        for (Slot& s : slots_)
            if (s.capacity < smallest->capacity)
                smallest = &s; // an empty slot has capacity 0
        if (capacity <= smallest->capacity)
            return false;
        if (smallest->base)
            ::munmap(smallest->base, smallest->capacity);
        *smallest = Slot{base, capacity};
        return true;
    }

private:
    struct Slot {
        char* base = nullptr;
        size_t capacity = 0;
    };
    std::array<Slot, 2> slots_{};
};
thread_local KeptMappings kept;

} // namespace

CaptureText::~CaptureText()
{
    if (!base_)
        return;
    if (capacity_ <= kKeptBytes && released_ == 0 && kept.keep(base_, capacity_))
        return;
    ::munmap(base_, capacity_);
}

CaptureText::CaptureText(CaptureText&& other) noexcept
    : base_(std::exchange(other.base_, nullptr))
    , size_(std::exchange(other.size_, 0))
    , capacity_(std::exchange(other.capacity_, 0))
    , released_(std::exchange(other.released_, 0))
    , source_(std::exchange(other.source_, {}))
    , left_(std::exchange(other.left_, 0))
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
        source_ = std::exchange(other.source_, {});
        left_ = std::exchange(other.left_, 0);
    }
    return *this;
}

void CaptureText::reserve(size_t n)
{
    if (n > SIZE_MAX / 4)
        throw std::bad_alloc();
    if (n + kTextPadding <= capacity_)
        return;
    if (!base_ && kept.take(n + kTextPadding, base_, capacity_))
        return;
    const size_t want = roundUpToPage(std::max(n + kTextPadding, capacity_ * 2));
    // Untouched pages cost nothing, and mremap moves page tables, not bytes.
    void* p = base_ ? ::mremap(base_, capacity_, want, MREMAP_MAYMOVE)
                    : ::mmap(nullptr, want, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED)
        throw std::bad_alloc();
    // Huge pages where the system gives them on request (THP "madvise"): on
    // 4-KiB pages the text's page faults doubled a read's time (a fault is
    // dear in a VM); release() still gives back what the reader is past.
    ::madvise(p, want, MADV_HUGEPAGE);
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

bool CaptureText::more(size_t atMost)
{
    const size_t room = std::min({ atMost, spareBytes(), left_ });
    const size_t n = source_ && room > 0 ? std::min(source_(spare(), room), room) : 0;
    size_ += n;
    left_ -= n;
    if (n == 0 || left_ == 0)
        source_ = {};
    return n > 0;
}

void CaptureText::release(const char* upTo) noexcept
{
    if (!base_ || capacity_ <= kKeptBytes || upTo <= base_ + released_ || upTo > base_ + size_)
        return;
    const size_t end = static_cast<size_t>(upTo - base_) / pageSize() * pageSize();
    if (end <= released_)
        return;
    // The pages are private and anonymous: MADV_DONTNEED frees them now.
    if (::madvise(base_ + released_, end - released_, MADV_DONTNEED) == 0)
        released_ = end;
}

} // namespace lockscope::detail
