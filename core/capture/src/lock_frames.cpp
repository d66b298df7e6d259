// SPDX-License-Identifier: GPL-2.0-or-later
#include "lockscope/capture/lock_frames.h"

#include <algorithm>
#include <array>
#include <cstdio>
#include <unordered_set>

namespace lockscope {
namespace {

bool startsWith(std::string_view s, std::string_view p) noexcept
{
    return s.substr(0, p.size()) == p;
}

template <size_t N>
bool anyEqual(std::string_view s, const std::array<std::string_view, N>& list) noexcept
{
    for (auto x : list)
        if (s == x)
            return true;
    return false;
}

template <size_t N>
bool anyPrefix(std::string_view s, const std::array<std::string_view, N>& list) noexcept
{
    for (auto x : list)
        if (startsWith(s, x))
            return true;
    return false;
}

// Exact names: their prefixes are too short to match safely ("down" would
// match down_interruptible but also e.g. a caller named downgrade_*).
constexpr std::array<std::string_view, 38> kLockExact{
    "queued_spin_lock_slowpath", "native_queued_spin_lock_slowpath",
    "__pv_queued_spin_lock_slowpath", "pv_queued_spin_lock_slowpath",
    "queued_read_lock_slowpath", "queued_write_lock_slowpath",
    "do_raw_spin_lock", "do_raw_read_lock", "do_raw_write_lock", "__lock_text_start",
    "mutex_lock", "mutex_lock_interruptible", "mutex_lock_killable", "mutex_lock_io",
    "mutex_lock_nested", "mutex_lock_interruptible_nested", "mutex_lock_killable_nested",
    "mutex_lock_io_nested", "ww_mutex_lock", "ww_mutex_lock_interruptible",
    "down_read", "down_read_killable", "down_read_interruptible", "down_write",
    "down_write_killable", "down_read_nested", "down_write_nested", "down_read_killable_nested",
    "down", "down_interruptible", "down_killable", "down_timeout",
    "percpu_rwsem_wait", "rt_spin_lock", "rt_read_lock", "rt_write_lock",
    "osq_lock", "mutex_spin_on_owner",
};

constexpr std::array<std::string_view, 17> kLockPrefix{
    "_raw_spin_", "_raw_read_", "_raw_write_", "__raw_spin_lock", "__mutex_lock", "__ww_mutex_lock",
    "mutex_optimistic_spin", "rwsem_down_", "__rwsem_down_", "rwsem_optimistic_spin", "__down",
    "percpu_down_", "__percpu_down_", "rt_mutex_", "__rt_mutex_", "rtlock_", "rwbase_",
};

constexpr std::array<std::string_view, 12> kTracingPrefix{
    "bpf_prog_", "bpf_trampoline_", "bpf_trace_run", "__bpf_trace_run", "__bpf_trace_contention_",
    "__traceiter_contention_", "trace_contention_", "perf_trace_contention_",
    "trace_event_raw_event_contention_", "__bpf_prog_enter", "__bpf_prog_exit", "perf_trace_buf",
};

constexpr std::array<std::string_view, 9> kSpinExact{
    "queued_spin_lock_slowpath", "native_queued_spin_lock_slowpath",
    "__pv_queued_spin_lock_slowpath", "pv_queued_spin_lock_slowpath",
    "queued_read_lock_slowpath", "queued_write_lock_slowpath", "do_raw_spin_lock", "kvm_wait",
    "__lock_text_start",
};

constexpr std::array<std::string_view, 4> kSpinPrefix{
    "_raw_spin_lock", "_raw_read_lock", "_raw_write_lock", "_raw_spin_trylock",
};

constexpr std::array<std::string_view, 9> kIdleExact{
    "default_idle", "default_idle_call", "cpu_idle_poll", "native_safe_halt", "pv_native_safe_halt",
    "arch_cpu_idle", "poll_idle", "do_idle", "cpuidle_idle_call",
};

constexpr std::array<std::string_view, 4> kIdlePrefix{
    "intel_idle", "acpi_idle", "mwait_idle", "acpi_safe_halt",
};

// x86-64's module area (MODULES_VADDR .. MODULES_END), home of the BPF JIT.
constexpr uint64_t kModuleAreaBegin = 0xffffffffa0000000ull;
constexpr uint64_t kModuleAreaEnd = 0xffffffffff000000ull;
// The fentry call an attached trampoline patches: the function's first
// instruction, after an endbr64 and padding at most.
constexpr uint64_t kPatchSiteMaxOffset = 16;

} // namespace

bool isBpfFrame(const Frame& f) noexcept
{
    if (f.function.empty())
        return f.address && *f.address >= kModuleAreaBegin && *f.address < kModuleAreaEnd;
    return f.module == "bpf" || startsWith(f.function, "bpf_trampoline_") || startsWith(f.function, "bpf_prog_");
}

bool runsBpf(const std::vector<Frame>& frames) noexcept
{
    return std::ranges::any_of(frames, [](const Frame& f) {
        return isBpfFrame(f) || startsWith(f.function, "bpf_trace_run") || startsWith(f.function, "__bpf_trace_");
    });
}

size_t dropBpfFrames(std::vector<Frame>& frames)
{
    size_t out = 0, dropped = 0;
    for (size_t i = 0; i < frames.size(); ++i) {
        if (isBpfFrame(frames[i])) {
            ++dropped;
            const bool last = i + 1 == frames.size() || !isBpfFrame(frames[i + 1]);
            // frames[i + 1] called the trampoline: the patched entry of the body kept just inside it.
            if (last && out > 0 && i + 1 < frames.size() && !frames[i + 1].function.empty() &&
                frames[i + 1].function == frames[out - 1].function && frames[i + 1].module == frames[out - 1].module &&
                frames[i + 1].offset <= kPatchSiteMaxOffset) {
                ++i;
            }
            continue;
        }
        if (out != i)
            frames[out] = std::move(frames[i]);
        ++out;
    }
    frames.resize(out);
    return dropped;
}

void dropBpfFrames(Capture& capture)
{
    std::unordered_set<uint32_t> ids;
    for (const auto& lock : capture.locks)
        for (const auto& site : lock.sites) {
            ids.insert(site.stack_id);
            for (const auto& h : site.holders)
                ids.insert(h.stack_id);
        }
    for (auto& stack : capture.stacks) {
        if (stack.kind != StackKind::Kernel || !ids.count(stack.id))
            continue;
        capture.stats.bpf_frames += dropBpfFrames(stack.frames);
        if (stack.frames.empty())
            stack.frames.push_back(Frame{kNoStackFrame, 0, "", std::nullopt});
    }
}

std::string_view keyCallerName(const Frame& frame, std::array<char, 24>& hex) noexcept
{
    if (!frame.function.empty())
        return baseFunctionName(frame.function);
    if (!frame.address)
        return {};
    const int n = std::snprintf(hex.data(), hex.size(), "0x%llx", static_cast<unsigned long long>(*frame.address));
    return {hex.data(), n > 0 ? static_cast<size_t>(n) : 0};
}

std::string baseLockType(const std::string& type)
{
    const size_t colon = type.find(':');
    return colon == std::string::npos ? type : type.substr(0, colon);
}

std::string callerLockKey(const std::string& type, const Frame* caller)
{
    std::array<char, 24> address{};
    const std::string_view name = caller ? keyCallerName(*caller, address) : std::string_view();
    return baseLockType(type) + "@" + std::string(name.empty() ? "unknown" : name);
}

std::string_view baseFunctionName(std::string_view name) noexcept
{
    size_t dot = name.find('.');
    return dot == std::string_view::npos || dot == 0 ? name : name.substr(0, dot);
}

bool isLockFunction(std::string_view name) noexcept
{
    name = baseFunctionName(name);
    // "_raw_spin_unlock*" is not a wait frame but is lock machinery all the same.
    return anyEqual(name, kLockExact) || anyPrefix(name, kLockPrefix);
}

bool isTracingFunction(std::string_view name) noexcept
{
    return anyPrefix(baseFunctionName(name), kTracingPrefix);
}

bool isSpinFunction(std::string_view name) noexcept
{
    name = baseFunctionName(name);
    return anyEqual(name, kSpinExact) || anyPrefix(name, kSpinPrefix);
}

bool isIdleFunction(std::string_view name) noexcept
{
    name = baseFunctionName(name);
    return anyEqual(name, kIdleExact) || anyPrefix(name, kIdlePrefix);
}

bool isKernelEntryFunction(std::string_view name) noexcept
{
    return name.rfind("asm_", 0) == 0;
}

bool isAsyncInterruptEntry(std::string_view name) noexcept
{
    return name.rfind("asm_sysvec_", 0) == 0 || name == "asm_common_interrupt" || name == "asm_spurious_interrupt" ||
           name.rfind("el1h_64_irq", 0) == 0 || name.rfind("el1h_64_fiq", 0) == 0;
}

} // namespace lockscope
