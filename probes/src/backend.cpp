// SPDX-License-Identifier: GPL-2.0-or-later
#include <algorithm>
#include <array>
#include <utility>

#include "lockscope/probes/probes.h"

namespace lockscope::probes {

namespace {

constexpr std::array<std::pair<Backend, const char*>, 7> kNames{{
    {Backend::Auto, "auto"},
    {Backend::Fentry, "fentry"},
    {Backend::Kprobe, "kprobe"},
    {Backend::TpBtf, "tp_btf"},
    {Backend::RawTp, "raw_tp"},
    {Backend::Tracepoint, "tracepoint"},
    {Backend::Off, "off"},
}};

} // namespace

const char* backendName(Backend b) noexcept
{
    for (const auto& [backend, name] : kNames)
        if (backend == b)
            return name;
    return "?";
}

std::optional<Backend> backendFromName(std::string_view name) noexcept
{
    for (const auto& [backend, n] : kNames)
        if (name == n)
            return backend;
    return std::nullopt;
}

std::string backendNames()
{
    std::string out;
    for (const auto& [backend, name] : kNames)
        out += (out.empty() ? "" : ", ") + std::string(name);
    return out;
}

std::string backendNames(const std::vector<Backend>& backends, std::string_view lastSeparator)
{
    std::string out;
    for (size_t i = 0; i < backends.size(); ++i) {
        if (i > 0)
            out += i + 1 == backends.size() ? lastSeparator : std::string_view(", ");
        out += backendName(backends[i]);
    }
    return out;
}

std::vector<Backend> familyBackends(HookFamily family)
{
    std::vector<Backend> out{Backend::Auto};
    for (Backend b : hooksToTry(family, Backend::Auto))
        out.push_back(b);
    if (family == HookFamily::Hold)
        out.push_back(Backend::Off);
    return out;
}

std::vector<Backend> hooksToTry(HookFamily family, Backend backend)
{
    std::vector<Backend> all;
    switch (family) {
    case HookFamily::Wait: // lock:contention_begin/end
        all = {Backend::TpBtf, Backend::RawTp, Backend::Tracepoint};
        break;
    case HookFamily::Hold: // the spin-lock functions
        all = {Backend::Fentry, Backend::Kprobe};
        break;
    case HookFamily::Syscalls: // the syscall functions, or sys_enter/sys_exit
        all = {Backend::Fentry, Backend::RawTp, Backend::Tracepoint};
        break;
    }
    if (backend == Backend::Auto)
        return all;
    if (std::find(all.begin(), all.end(), backend) != all.end())
        return {backend};
    return {};
}

} // namespace lockscope::probes
